// Telegram → keel: a message becomes a turn. request_id is `tg:<update_id>`, so an
// update Telegram hands out again (the adapter died before confirming it) is answered
// with the first run by keel, never a second one. A handler that throws leaves the
// update unconfirmed (see polling.ts / webhook.ts): it is offered again.

import type { Bot, Context } from 'grammy';
import { KeelCallError } from './keel-client.ts';
import type { KeelClient } from './keel-client.ts';

export const NON_TEXT_REPLY = 'Sorry, I can only read text messages.';
export const NEW_THREAD_REPLY = 'Started a new conversation.';
export const REFUSED_REPLY = 'Sorry, I could not take that message.';
export const START_REPLY = 'Hello! Send me a message and I will answer.';

/** In a group, only a message that mentions the bot or replies to it is for the bot. */
function addressedToBot(ctx: Context): boolean {
  const message = ctx.message;
  if (!message || ctx.chat?.type === 'private') return true;
  const me = ctx.me;
  if (message.reply_to_message?.from?.id === me.id) return true;
  const text = message.text ?? message.caption ?? '';
  return text.toLowerCase().includes(`@${me.username.toLowerCase()}`);
}

function withoutMention(text: string, username: string): string {
  return text.replace(new RegExp(`@${username}\\b`, 'gi'), '').trim();
}

export function installInbound(bot: Bot, keel: KeelClient, agent: string): void {
  bot.on('message', async (ctx) => {
    if (!addressedToBot(ctx)) return;
    const chatId = ctx.chat.id;
    const scope = `tg:${chatId}`;
    const text = ctx.message.text;
    if (text === undefined) {
      await ctx.reply(NON_TEXT_REPLY);
      return;
    }
    const command = /^\/(\w+)(@\w+)?(\s|$)/.exec(text);
    if (command?.[1] === 'start') {
      await ctx.reply(START_REPLY);
      return;
    }
    if (command?.[1] === 'new') {
      await keel.deleteThread(agent, scope);
      await ctx.reply(NEW_THREAD_REPLY);
      return;
    }
    const from = ctx.message.from;
    try {
      await keel.postTurn({
        agent,
        scope,
        payload: {
          text: withoutMention(text, ctx.me.username),
          from: { id: from.id, username: from.username ?? null, first_name: from.first_name },
          message_id: ctx.message.message_id,
        },
        request_id: `tg:${ctx.update.update_id}`,
        delivery: { destination: scope },
      });
    } catch (error) {
      // keel refused this message for good (a 4xx other than 429: an unknown agent, a
      // body it rejects): retrying would block every later update, so answer and move on.
      // Unreachable, 429 and 5xx propagate: the update stays unconfirmed and comes back.
      if (!(error instanceof KeelCallError) || !isPermanent(error)) throw error;
      await ctx.reply(`${REFUSED_REPLY} (${error.code ?? error.status})`);
      return;
    }
    // "typing…" while the run works; a failure here only loses the indicator.
    await ctx.api.sendChatAction(chatId, 'typing').catch(() => undefined);
  });
}

function isPermanent(error: KeelCallError): boolean {
  const status = error.status;
  return status !== null && status >= 400 && status < 500 && status !== 429;
}
