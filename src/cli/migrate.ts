// `keel migrate [--check]`: applies pending schema migrations (serve does it too), or
// with --check only reports them and exits non-zero when any is pending. On PostgreSQL
// it first creates the database when it does not exist (or prints the command that
// does, when this user may not).

import { redactStoreUrl } from '../config-locations.ts';
import { loadServerConfig, parseCommand, SERVER_OPTIONS } from './args.ts';
import { UsageError } from './errors.ts';

export const MIGRATE_USAGE = `keel migrate [--check] [--config FILE] [--data-dir DIR] [--store-url URL]`;

export async function migrateCommand(
  argv: string[],
  print: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<number> {
  const { values, positionals } = parseCommand(argv, {
    ...SERVER_OPTIONS,
    check: { type: 'boolean' },
  });
  if (positionals.length > 0) throw new UsageError(`migrate takes no arguments: ${positionals[0]}`);
  const config = await loadServerConfig(values);
  // Loaded here, not at the top: every `keel` command imports this file's usage line.
  const { ensurePostgresDatabase, migratePostgres } = await import('../store/postgres/index.ts');
  const { migrateSqlite } = await import('../store/sqlite/index.ts');
  const { url, durability } = config.store;
  // Both backends report alike: current, latest, applied, pending.
  const migrate = url.startsWith('sqlite:')
    ? (check: boolean) => migrateSqlite(url.slice('sqlite:'.length), { check, durability })
    : (check: boolean) => migratePostgres(url, { check });
  // Printed URLs never carry a password (the start log line's rule).
  const shownUrl = redactStoreUrl(url);
  if (!url.startsWith('sqlite:') && !values.check) {
    const { database, created } = await ensurePostgresDatabase(url);
    if (created) print(`created database ${database}`);
  }
  const before = await migrate(true);
  if (values.check) {
    if (before.pending.length === 0) {
      print(`schema current: version ${before.current} (${shownUrl})`);
      return 0;
    }
    print(`pending migrations (schema ${before.current} → ${before.latest}, ${shownUrl}):`);
    for (const migration of before.pending) print(`  ${migration.version} ${migration.name}`);
    return 1;
  }
  const after = await migrate(false);
  if (before.pending.length === 0) print(`nothing to apply: schema version ${after.current}`);
  for (const migration of before.pending) print(`applied ${migration.version} ${migration.name}`);
  if (before.pending.length > 0) print(`schema version ${after.current} (${shownUrl})`);
  return 0;
}
