// `keel-telegram --agent <name>`: a Telegram bot for one keel agent. Inbound by long
// polling; outbound from keel's outbox. Settings: KEEL_URL, KEEL_TOKEN, KEEL_TENANT,
// TELEGRAM_BOT_TOKEN, TELEGRAM_ALLOWED_USERS, TELEGRAM_API_ROOT (docs/channels.md).

import { Bot } from 'grammy';
import { installAccessCheck } from './access.ts';
import { ConfigError, loadAdapterConfig } from './config.ts';
import { installApprovalButtons } from './approvals.ts';
import { installInbound } from './inbound.ts';
import { KeelClient } from './keel-client.ts';
import { Outbound } from './outbound.ts';
import { pollUpdates } from './polling.ts';
import { startWebhookServer } from './webhook.ts';

async function main(): Promise<number> {
  let config;
  try {
    config = loadAdapterConfig(process.argv.slice(2), process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`keel-telegram: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  const log = (line: string): void => {
    process.stderr.write(`keel-telegram: ${line}\n`);
  };
  const keel = new KeelClient(config.keelUrl, config.keelToken, config.tenant);
  const bot = new Bot(config.botToken, { client: { apiRoot: config.apiRoot } });
  // First: no handler below sees an update from someone not allowed.
  installAccessCheck(bot, config.allowedUsers, log);
  installInbound(bot, keel, config.agent);
  installApprovalButtons(bot, keel);
  await bot.init();
  const stop = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => stop.abort());
  }
  const outbound = new Outbound(bot.api, keel, {
    waitMs: config.claimWaitMs,
    leaseMs: config.leaseMs,
    log,
  });
  let inbound: Promise<void>;
  if (config.webhook) {
    const { server, url } = await startWebhookServer(bot, config.webhook, log);
    await bot.api.setWebhook(config.webhook.url, { secret_token: config.webhook.secret });
    process.stdout.write(`keel-telegram: webhook listening on ${url}\n`);
    inbound = new Promise((resolve) => {
      stop.signal.addEventListener('abort', () => server.close(() => resolve()));
    });
  } else {
    // Telegram refuses getUpdates while a webhook is set.
    await bot.api.deleteWebhook();
    inbound = pollUpdates(bot, stop.signal, log);
  }
  process.stdout.write(`keel-telegram: @${bot.botInfo.username} serving agent ${config.agent}\n`);
  await Promise.all([inbound, outbound.run(stop.signal)]);
  return 0;
}

process.exit(await main());
