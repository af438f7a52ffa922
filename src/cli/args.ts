// How every `keel` command reads its argv: strict flags (an unknown one is a usage
// error, cli/errors.ts) and positionals allowed; and the flags of the commands that open
// the server's config and store themselves (serve, migrate, memory). The config module
// (zod, TOML) is loaded only by those commands: `keel --help` and the client commands
// never pay for it (docs/benchmarks.md, CLI start).

import type { ParseArgsConfig } from 'node:util';
import { parseArgs } from 'node:util';
import type { ConfigFlags, KeelConfig } from '../config.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

export function parseCommand<const O extends Options>(argv: string[], options: O) {
  return parseArgs({ args: argv, strict: true, allowPositionals: true, options });
}

/** The parseArgs options of a command that loads the server config. */
export const SERVER_OPTIONS = {
  config: { type: 'string' },
  'data-dir': { type: 'string' },
  'store-url': { type: 'string' },
} as const;

export interface ServerFlags {
  config?: string | undefined;
  'data-dir'?: string | undefined;
  'store-url'?: string | undefined;
}

/** The config file named by --config, with --data-dir / --store-url (and `more`) over it. */
export async function loadServerConfig(
  flags: ServerFlags,
  more: ConfigFlags = {},
): Promise<KeelConfig> {
  const { loadConfig } = await import('../config.ts');
  return loadConfig({
    config: flags.config,
    data_dir: flags['data-dir'],
    store_url: flags['store-url'],
    ...more,
  });
}
