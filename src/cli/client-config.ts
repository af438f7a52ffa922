// Where the CLI's client commands find the server: flags, then KEEL_URL / KEEL_TOKEN /
// KEEL_TENANT, then defaults. The only place the CLI client reads the environment
// (server settings stay in src/config.ts, which these commands never need).

export interface ClientFlags {
  url?: string;
  token?: string;
  tenant?: string;
}

export interface ClientConfig {
  url: string;
  token: string | null;
  tenant: string;
}

const DEFAULT_URL = 'http://127.0.0.1:8080';

export function loadClientConfig(
  flags: ClientFlags,
  env: NodeJS.ProcessEnv = process.env,
): ClientConfig {
  const url = (flags.url ?? env.KEEL_URL ?? DEFAULT_URL).replace(/\/+$/, '');
  return {
    url,
    token: flags.token ?? env.KEEL_TOKEN ?? null,
    tenant: flags.tenant ?? env.KEEL_TENANT ?? 'default',
  };
}

/** The parseArgs options every client command accepts. */
export const CLIENT_OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  tenant: { type: 'string' },
} as const;

export const CLIENT_USAGE = '[--url URL] [--token TOKEN] [--tenant NAME]';
