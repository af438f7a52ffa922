// Where the CLI's client commands find the server: flags, then KEEL_URL / KEEL_TOKEN /
// KEEL_TENANT, then defaults. The only place the CLI client reads the environment
// (server settings stay in src/config.ts, which these commands never need).

import { shellWord } from '../shell-word.ts';

export interface ClientFlags {
  url?: string;
  token?: string;
  tenant?: string;
}

export interface ClientConfig {
  url: string;
  token: string | null;
  tenant: string;
  /**
   * The url and tenant as given by flag (not by KEEL_URL / KEEL_TENANT or a default): a
   * command printed for the user to run later repeats them, since another shell shares
   * the environment but not this command line. Never the token.
   */
  given: { url?: string; tenant?: string };
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
    given: {
      ...(flags.tenant !== undefined && { tenant: flags.tenant }),
      ...(flags.url !== undefined && { url }),
    },
  };
}

/**
 * The flags (with a leading space, or '') that make a printed `keel` command reach the
 * same server and tenant: those this command was given by flag. The token never.
 */
export function repeatedFlags(given: ClientConfig['given']): string {
  const flags = [
    ...(given.tenant !== undefined ? ['--tenant', given.tenant] : []),
    ...(given.url !== undefined ? ['--url', given.url] : []),
  ];
  return flags.map((flag) => ` ${shellWord(flag)}`).join('');
}

/** The parseArgs options every client command accepts. */
export const CLIENT_OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  tenant: { type: 'string' },
} as const;

export const CLIENT_USAGE = '[--url URL] [--token TOKEN] [--tenant NAME]';
