// Who may use the bot (TELEGRAM_ALLOWED_USERS, docs/channels.md): an update whose sender
// is not on the list runs nothing — no turn, no /new, no approval decided — and is
// confirmed like any handled update, so it is not offered again. A message is not
// answered: a refusal would tell a stranger the bot is alive, and a flood of them would
// spend the bot's send rate limit, which the owner's answers share. A button press is
// answered (Telegram shows a spinner until it is), and only reaches a stranger who can
// see the owner's message: a group the owner added the bot to. The first update from each
// stranger is logged with their id, which is how an owner finds their own.

import type { Bot } from 'grammy';
import type { AllowedUsers } from './config.ts';

export const NOT_ALLOWED_BUTTON_REPLY = 'You are not allowed to decide this.';

/** Strangers logged at most once each, up to this many (a flood cannot fill the log). */
const LOGGED_STRANGERS = 1000;

/** Installs the check before every handler: call it before installInbound/ApprovalButtons. */
export function installAccessCheck(
  bot: Bot,
  allowed: AllowedUsers,
  log: (line: string) => void,
): void {
  if (allowed === 'anyone') {
    log('TELEGRAM_ALLOW_ANYONE=1: anyone who finds this bot runs turns on this agent');
    return;
  }
  const logged = new Set<number>();
  bot.use(async (ctx, next) => {
    const from = ctx.from;
    if (from !== undefined && allowed.has(from.id)) {
      await next();
      return;
    }
    if (from !== undefined && !logged.has(from.id) && logged.size < LOGGED_STRANGERS) {
      logged.add(from.id);
      const name = from.username ? ` (@${from.username})` : '';
      log(`ignoring user ${from.id}${name}: not in TELEGRAM_ALLOWED_USERS`);
    }
    if (ctx.callbackQuery) {
      // Best effort: a failed answer must not leave the update to be offered again.
      await ctx.answerCallbackQuery({ text: NOT_ALLOWED_BUTTON_REPLY }).catch(() => undefined);
    }
  });
}
