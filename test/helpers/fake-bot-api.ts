// A fake Telegram Bot API on loopback that behaves like Telegram where the adapter
// depends on it: getUpdates long-polls and forgets updates below the offset it is given
// (that is how Telegram learns an update was handled), sendMessage refuses more than 4096
// characters, scripted failures answer 429 with retry_after or a 5xx, and a held
// sendMessage never answers (a message only counts as shown once its answer was written).

import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

export interface SentMessage {
  chat_id: string;
  text: string;
  /** Date.now() when the request arrived (the delivery bench measures to it). */
  received_at: number;
  /** The inline keyboard sent with it, if any. */
  reply_markup?: { inline_keyboard: { text: string; callback_data?: string }[][] };
}

type Failure = { status: 429; retry_after: number } | { status: 500 | 502 };

export interface FakeBotApi {
  url: string;
  token: string;
  /** Messages shown to users, in order. */
  sent: SentMessage[];
  /** Every sendMessage request received, shown or not. */
  sendAttempts: number;
  chatActions: number;
  /** The highest offset any getUpdates asked for (updates below it are confirmed). */
  confirmedOffset: number;
  /** How many times each update_id was handed out by getUpdates. */
  handedOut: Map<number, number>;
  /** Queues a user's message (or any update body) and returns its update_id. */
  push(update: Record<string, unknown>): number;
  /** Offers an update again with its old update_id, as Telegram does after a lost confirm. */
  redeliver(updateId: number): void;
  /** The next sends answer these failures in order; `null` lets that send through. */
  failNextSends(...failures: (Failure | null)[]): void;
  /** answerCallbackQuery calls: which button press was answered with what text. */
  callbackAnswers: { callback_query_id: string; text: string | null }[];
  /** editMessageReplyMarkup calls (the bot removing buttons). */
  markupEdits: { chat_id: string; message_id: number }[];
  /** What the last setWebhook asked for (deleteWebhook clears it). */
  webhook: { url: string; secret_token: string | null } | null;
  /** POSTs an update to the registered webhook as Telegram does; `secret` overrides the header. */
  pushToWebhook(update: Record<string, unknown>, secret?: string): Promise<number>;
  /** The next sendMessage is received but never answered; resolves when it arrives. */
  holdNextSend(): Promise<void>;
  close(): Promise<void>;
}

export const BOT_USER = { id: 4242, is_bot: true, first_name: 'Keel', username: 'keel_test_bot' };

export async function startFakeBotApi(): Promise<FakeBotApi> {
  const token = '4242:fake-token';
  const queue: Array<Record<string, unknown> & { update_id: number }> = [];
  const all = new Map<number, Record<string, unknown> & { update_id: number }>();
  const waiters = new Set<() => void>();
  const failures: (Failure | null)[] = [];
  let nextId = 1000;
  let hold: (() => void) | null = null;
  const held = new Set<ServerResponse>();

  const wakeAll = (): void => {
    for (const wake of waiters) wake();
    waiters.clear();
  };

  const fake: FakeBotApi = {
    url: '',
    token,
    sent: [],
    sendAttempts: 0,
    chatActions: 0,
    confirmedOffset: 0,
    handedOut: new Map(),
    push(update) {
      const full = { update_id: nextId, ...update };
      nextId += 1;
      queue.push(full);
      all.set(full.update_id, full);
      wakeAll();
      return full.update_id;
    },
    redeliver(updateId) {
      const update = all.get(updateId);
      if (!update) throw new Error(`no update ${updateId}`);
      queue.push(update);
      queue.sort((a, b) => a.update_id - b.update_id);
      wakeAll();
    },
    callbackAnswers: [],
    markupEdits: [],
    webhook: null,
    async pushToWebhook(update, secret) {
      if (!fake.webhook) throw new Error('no webhook set');
      const full = { update_id: nextId, ...update };
      nextId += 1;
      const token = secret ?? fake.webhook.secret_token;
      const response = await fetch(fake.webhook.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(token !== null && { 'x-telegram-bot-api-secret-token': token }),
        },
        body: JSON.stringify(full),
      });
      await response.arrayBuffer();
      return response.status;
    },
    failNextSends(...list) {
      failures.push(...list);
    },
    holdNextSend() {
      return new Promise((resolve) => {
        hold = resolve;
      });
    },
    async close() {
      wakeAll();
      for (const response of held) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  function answer(response: ServerResponse, status: number, body: unknown): void {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const match = /^\/bot([^/]+)\/(\w+)$/.exec(request.url ?? '');
    if (!match || match[1] !== token) {
      answer(response, 404, { ok: false, error_code: 404, description: 'Not Found' });
      return;
    }
    let raw = '';
    for await (const chunk of request) raw += String(chunk);
    const params = (raw ? JSON.parse(raw) : {}) as Record<string, unknown>;
    switch (match[2]) {
      case 'getMe':
        answer(response, 200, { ok: true, result: BOT_USER });
        return;
      case 'getUpdates': {
        const offset = Number(params.offset ?? 0);
        fake.confirmedOffset = Math.max(fake.confirmedOffset, offset);
        // Confirmed updates are gone for good.
        for (let i = queue.length - 1; i >= 0; i -= 1) {
          if ((queue[i]?.update_id ?? 0) < offset) queue.splice(i, 1);
        }
        if (queue.length === 0) {
          const timeoutMs = Math.min(Number(params.timeout ?? 0), 25) * 1000;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, timeoutMs);
            waiters.add(() => {
              clearTimeout(timer);
              resolve();
            });
            response.once('close', resolve);
          });
        }
        const result = queue.filter((u) => u.update_id >= offset);
        for (const update of result) {
          fake.handedOut.set(update.update_id, (fake.handedOut.get(update.update_id) ?? 0) + 1);
        }
        answer(response, 200, { ok: true, result });
        return;
      }
      case 'setWebhook':
        fake.webhook = {
          url: String(params.url),
          secret_token: typeof params.secret_token === 'string' ? params.secret_token : null,
        };
        answer(response, 200, { ok: true, result: true });
        return;
      case 'deleteWebhook':
        fake.webhook = null;
        answer(response, 200, { ok: true, result: true });
        return;
      case 'answerCallbackQuery':
        fake.callbackAnswers.push({
          callback_query_id: String(params.callback_query_id),
          text: typeof params.text === 'string' ? params.text : null,
        });
        answer(response, 200, { ok: true, result: true });
        return;
      case 'editMessageReplyMarkup':
        fake.markupEdits.push({
          chat_id: String(params.chat_id),
          message_id: Number(params.message_id),
        });
        answer(response, 200, { ok: true, result: true });
        return;
      case 'sendChatAction':
        fake.chatActions += 1;
        answer(response, 200, { ok: true, result: true });
        return;
      case 'sendMessage': {
        fake.sendAttempts += 1;
        const receivedAt = Date.now();
        const text = String(params.text ?? '');
        const failure = failures.shift();
        if (failure?.status === 429) {
          answer(response, 429, {
            ok: false,
            error_code: 429,
            description: `Too Many Requests: retry after ${failure.retry_after}`,
            parameters: { retry_after: failure.retry_after },
          });
          return;
        }
        if (failure) {
          answer(response, failure.status, {
            ok: false,
            error_code: failure.status,
            description: 'Internal Server Error',
          });
          return;
        }
        if (hold) {
          const arrived = hold;
          hold = null;
          held.add(response);
          arrived();
          return;
        }
        if (text.length === 0 || text.length > 4096) {
          answer(response, 400, {
            ok: false,
            error_code: 400,
            description:
              text.length === 0
                ? 'Bad Request: message text is empty'
                : 'Bad Request: message is too long',
          });
          return;
        }
        const chatId = String(params.chat_id);
        fake.sent.push({
          chat_id: chatId,
          text,
          received_at: receivedAt,
          ...(params.reply_markup !== undefined && {
            reply_markup: params.reply_markup as SentMessage['reply_markup'],
          }),
        });
        answer(response, 200, {
          ok: true,
          result: { message_id: fake.sent.length, date: 0, chat: { id: Number(chatId) }, text },
        });
        return;
      }
      default:
        answer(response, 404, { ok: false, error_code: 404, description: 'Not Found: method' });
    }
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      answer(response, 500, { ok: false, error_code: 500, description: String(error) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  fake.url = `http://127.0.0.1:${address.port}`;
  return fake;
}

/** A private chat's text message from a user, as Telegram sends it. */
export function textUpdate(chatId: number, text: string, messageId = 1): Record<string, unknown> {
  return {
    message: {
      message_id: messageId,
      date: 0,
      chat: { id: chatId, type: 'private', first_name: 'Ada' },
      from: { id: chatId, is_bot: false, first_name: 'Ada', username: 'ada' },
      text,
    },
  };
}

/**
 * A press on an inline button of the bot's message `messageId` in a private chat, by
 * the chat's user unless `fromId` names another (a forged or group press).
 */
export function buttonPress(
  chatId: number,
  messageId: number,
  data: string,
  id: string,
  fromId = chatId,
): Record<string, unknown> {
  return {
    callback_query: {
      id,
      chat_instance: `ci${chatId}`,
      data,
      from: { id: fromId, is_bot: false, first_name: 'Ada', username: 'ada' },
      message: {
        message_id: messageId,
        date: 0,
        chat: { id: chatId, type: 'private', first_name: 'Ada' },
        from: BOT_USER,
        text: 'Approval needed',
      },
    },
  };
}
