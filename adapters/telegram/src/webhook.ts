// Webhook mode: Telegram POSTs each update to us. grammY's callback checks the
// `X-Telegram-Bot-Api-Secret-Token` header (constant-time) and answers 401 on a mismatch.
// A handler that fails (keel did not accept the turn) answers 500, so Telegram offers
// the update again; request_id `tg:<update_id>` keeps that from making a second run.

import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { webhookCallback } from 'grammy';
import type { Bot } from 'grammy';

export interface WebhookSettings {
  /** host:port to listen on (port 0 picks a free one). */
  listen: string;
  secret: string;
}

export async function startWebhookServer(
  bot: Bot,
  settings: WebhookSettings,
  log: (line: string) => void,
): Promise<{ server: Server; url: string }> {
  const callback = webhookCallback(bot, 'http', { secretToken: settings.secret });
  const server = createServer((request, response) => {
    callback(request, response).catch((error: unknown) => {
      log(`webhook update not accepted: ${(error as Error).message}`);
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  const split = settings.listen.lastIndexOf(':');
  const host = settings.listen.slice(0, split);
  const port = Number(settings.listen.slice(split + 1));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return { server, url: `http://${host}:${address.port}` };
}
