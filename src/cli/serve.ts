// `keel serve`: API + workers in one process until SIGTERM/SIGINT, then a graceful
// stop (in-flight runs interrupted at a checkpoint, leases released) and exit 0.

import type { KeelOptions, KeelRole } from '../main.ts';
import { loadServerConfig, parseCommand, SERVER_OPTIONS } from './args.ts';
import { UsageError } from './errors.ts';

export const SERVE_USAGE = `keel serve [--config FILE] [--listen HOST:PORT | --port N] [--data-dir DIR] [--store-url URL] [--role api|worker|scheduler|all] [--pretty]`;

/** A stop that takes longer than this has hung; the process exits non-zero instead. */
const STOP_DEADLINE_MS = 30_000;

/**
 * `injected`: test-only fault points, tools and store/journal wrappers (the seeded bugs
 * of test/helpers/keel-test-serve.ts).
 */
export async function serveCommand(
  argv: string[],
  injected: Pick<KeelOptions, 'failpoints' | 'extraTools' | 'wrapStore' | 'wrapJournal'> = {},
): Promise<number> {
  const { values, positionals } = parseCommand(argv, {
    ...SERVER_OPTIONS,
    listen: { type: 'string' },
    port: { type: 'string' },
    role: { type: 'string' },
    pretty: { type: 'boolean' },
  });
  if (positionals.length > 0) throw new UsageError(`serve takes no arguments: ${positionals[0]}`);
  // The server's modules load only when serving: `keel --help` stays fast.
  const { KEEL_ROLES, startKeel } = await import('../main.ts');
  const role = (values.role ?? 'all') as KeelRole;
  if (!KEEL_ROLES.includes(role)) {
    throw new UsageError(`--role must be one of ${KEEL_ROLES.join(', ')}, got "${values.role}"`);
  }
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port <= 65_535))
    throw new UsageError(`--port: expected a port number 0–65535, got "${values.port}"`);
  if (port !== undefined && values.listen !== undefined)
    throw new UsageError('--port and --listen: give one (--listen HOST:PORT sets both)');
  const config = await loadServerConfig(values, {
    listen: values.listen,
    pretty: values.pretty,
    ...(port !== undefined && { port }),
  });
  // At a terminal the memory embedder prepares at once, with a progress bar, so the
  // first memory call does not meet a 20 s cache build; elsewhere on its first use.
  const keel = await startKeel(config, {
    role,
    prepareEmbedder: process.stderr.isTTY === true,
    ...injected,
  });
  process.stdout.write(`${keel.banner}\n`);

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  keel.logger.info({ signal }, 'shutting down');
  // A second signal, or a stop that hangs, ends the process at once.
  const force = (): never => process.exit(1);
  process.once('SIGTERM', force);
  process.once('SIGINT', force);
  setTimeout(force, STOP_DEADLINE_MS).unref();
  await keel.stop();
  keel.logger.info('stopped');
  return 0;
}
