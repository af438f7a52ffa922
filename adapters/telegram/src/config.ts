// The adapter's settings: read once from the environment and the command line.

export interface TelegramAdapterConfig {
  keelUrl: string;
  keelToken: string;
  tenant: string;
  agent: string;
  botToken: string;
  /** The Bot API base URL (a fake one in tests). */
  apiRoot: string;
  /** How long one claim waits on keel for a delivery (keel's `wait_ms`). */
  claimWaitMs: number;
  /** Lease of a claimed delivery: a crashed adapter's claim is handed out again after it. */
  leaseMs: number;
  /** Webhook mode when set: Telegram POSTs updates to `url`; else long polling. */
  webhook: { url: string; listen: string; secret: string } | null;
  /** Telegram user ids whose updates are handled (access.ts); 'anyone' only when asked for. */
  allowedUsers: AllowedUsers;
}

export type AllowedUsers = ReadonlySet<number> | 'anyone';

export class ConfigError extends Error {}

export function loadAdapterConfig(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): TelegramAdapterConfig {
  let agent: string | undefined;
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === '--agent') agent = argv[i + 1];
    else if (argv[i]?.startsWith('--agent=')) agent = argv[i]?.slice('--agent='.length);
  }
  const need = (name: string): string => {
    const value = env[name];
    if (!value) throw new ConfigError(`${name} is not set`);
    return value;
  };
  if (!agent) throw new ConfigError('usage: keel-telegram --agent <name>');
  const leaseMs = Number(env.KEEL_CLAIM_LEASE_MS ?? 60_000);
  if (!Number.isInteger(leaseMs) || leaseMs < 1000 || leaseMs > 600_000) {
    throw new ConfigError('KEEL_CLAIM_LEASE_MS must be an integer from 1000 to 600000');
  }
  const webhookUrl = env.TELEGRAM_WEBHOOK_URL;
  const webhook = webhookUrl
    ? {
        url: webhookUrl,
        listen: env.TELEGRAM_WEBHOOK_LISTEN ?? '127.0.0.1:8443',
        secret: need('TELEGRAM_WEBHOOK_SECRET'),
      }
    : null;
  if (webhook && !/^[A-Za-z0-9_-]{1,256}$/.test(webhook.secret)) {
    throw new ConfigError('TELEGRAM_WEBHOOK_SECRET must be 1-256 characters of A-Z a-z 0-9 _ -');
  }
  return {
    allowedUsers: loadAllowedUsers(env),
    webhook,
    keelUrl: (env.KEEL_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, ''),
    keelToken: need('KEEL_TOKEN'),
    tenant: need('KEEL_TENANT'),
    agent,
    botToken: need('TELEGRAM_BOT_TOKEN'),
    apiRoot: (env.TELEGRAM_API_ROOT ?? 'https://api.telegram.org').replace(/\/+$/, ''),
    claimWaitMs: 25_000,
    leaseMs,
  };
}

/**
 * TELEGRAM_ALLOWED_USERS (comma-separated numeric user ids), or TELEGRAM_ALLOW_ANYONE=1.
 * Neither is an error: a bot is found by anyone who guesses its username, and every
 * message runs a turn on the owner's model key, memory and tools.
 */
export function loadAllowedUsers(env: NodeJS.ProcessEnv): AllowedUsers {
  const list = env.TELEGRAM_ALLOWED_USERS;
  const anyone = env.TELEGRAM_ALLOW_ANYONE;
  if (anyone !== undefined && anyone !== '1') {
    throw new ConfigError(`TELEGRAM_ALLOW_ANYONE must be 1 when set (got "${anyone}")`);
  }
  if (list !== undefined && anyone !== undefined) {
    throw new ConfigError('set TELEGRAM_ALLOWED_USERS or TELEGRAM_ALLOW_ANYONE=1, not both');
  }
  if (anyone === '1') return 'anyone';
  if (list === undefined || list.trim() === '') {
    throw new ConfigError(
      'TELEGRAM_ALLOWED_USERS is not set: list the numeric Telegram user ids that may use ' +
        'the bot, comma-separated (the adapter logs the id of anyone it ignores), or set ' +
        'TELEGRAM_ALLOW_ANYONE=1 to let anyone who finds the bot run turns on this agent',
    );
  }
  const ids = new Set<number>();
  for (const entry of list.split(',')) {
    const id = entry.trim();
    // User ids are positive (negative ids are group chats, not people).
    if (!/^[1-9][0-9]{0,15}$/.test(id) || !Number.isSafeInteger(Number(id))) {
      throw new ConfigError(
        `TELEGRAM_ALLOWED_USERS: ${JSON.stringify(id)} is not a Telegram user id (a positive integer)`,
      );
    }
    ids.add(Number(id));
  }
  return ids;
}
