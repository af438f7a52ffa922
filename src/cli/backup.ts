// `keel backup FILE` and `keel restore FILE` (docs/operations.md): the SQLite store's
// database to one file while keel serves, and back into a stopped data dir. They open
// the store's file directly, as `keel migrate` does; a PostgreSQL store has pg_dump and
// pg_restore, which these commands name instead of wrapping (their versions must match
// the server's, and they take the connection settings an operator already has).

import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { KeelConfig } from '../config.ts';
import { KeelError } from '../errors.ts';
import { loadServerConfig, parseCommand, SERVER_OPTIONS } from './args.ts';
import { UsageError } from './errors.ts';

const STORE_FLAGS = '[--config FILE] [--data-dir DIR] [--store-url URL]';
export const BACKUP_USAGE = `keel backup FILE [--force] ${STORE_FLAGS}`;
export const RESTORE_USAGE = `keel restore FILE [--force] ${STORE_FLAGS}`;

export const BACKUP_HELP = `Writes a consistent copy of the SQLite store (keel.db: runs, threads, artifacts,
memory and its vectors, tenants, tokens, secrets) to FILE, while keel serves. The copy
is checked (migrations, integrity, foreign keys) before it takes the name FILE; an
existing FILE is refused unless --force. The file holds secrets: it is created mode 0600.
PostgreSQL: use pg_dump (docs/operations.md).`;

export const RESTORE_HELP = `Puts the keel database FILE (a keel backup) in place as the store's database. Refused
while a keel process owns the data dir, and over an existing database unless --force,
which keeps the old one as keel.db.before-restore-<time>. FILE is checked first (a keel
database, not from a newer keel, integrity, foreign keys); the next start applies any
newer migrations. PostgreSQL: use pg_restore (docs/operations.md).`;

type Print = (line: string) => void;
const stdout: Print = (line) => process.stdout.write(`${line}\n`);

function mebibytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** The one positional FILE, with --force and the store flags. */
function parseFileCommand(name: string, argv: string[]) {
  const { values, positionals } = parseCommand(argv, {
    ...SERVER_OPTIONS,
    force: { type: 'boolean' },
  });
  const [file, ...rest] = positionals;
  if (file === undefined || file.length === 0) throw new UsageError(`${name}: expected FILE`);
  if (rest.length > 0) throw new UsageError(`${name} takes one FILE, got also ${rest[0]}`);
  return { file: resolve(file), force: values.force === true, values };
}

/** The SQLite database's path, or the pg_dump / pg_restore hint for a PostgreSQL store. */
function sqlitePath(config: KeelConfig, tool: 'pg_dump' | 'pg_restore'): string {
  const { url } = config.store;
  if (url.startsWith('sqlite:')) return resolve(url.slice('sqlite:'.length));
  const command =
    tool === 'pg_dump'
      ? 'pg_dump --format=custom --schema=<schema> --file=FILE <database url>'
      : 'pg_restore --dbname=<database url> --single-transaction --exit-on-error FILE';
  throw new KeelError(
    'BACKEND_UNSUPPORTED',
    `the store is PostgreSQL: back it up and restore it with PostgreSQL's own tools (${command}); docs/operations.md, "PostgreSQL", has the steps`,
  );
}

export async function backupCommand(argv: string[], print: Print = stdout): Promise<number> {
  const { file, force, values } = parseFileCommand('backup', argv);
  if (!existsSync(dirname(file))) {
    throw new UsageError(`backup: the directory ${dirname(file)} does not exist`);
  }
  const config = await loadServerConfig(values);
  const source = sqlitePath(config, 'pg_dump');
  // Loaded here, not at the top: every `keel` command imports this file's usage line.
  const { backupSqlite } = await import('../store/sqlite/backup.ts');
  const report = await backupSqlite(source, file, { force });
  print(
    `backup written: ${report.path} (${mebibytes(report.bytes)}, schema version ${report.schemaVersion}, ${report.tenants} tenants, ${report.runs} runs; integrity ok) from ${report.source} in ${report.ms} ms`,
  );
  return 0;
}

export async function restoreCommand(argv: string[], print: Print = stdout): Promise<number> {
  const { file, force, values } = parseFileCommand('restore', argv);
  const config = await loadServerConfig(values);
  const target = sqlitePath(config, 'pg_restore');
  const { restoreSqlite } = await import('../store/sqlite/backup.ts');
  const report = await restoreSqlite(file, target, { force });
  if (report.setAside) print(`the database it replaced is kept as ${report.setAside}`);
  const pending = report.latestVersion - report.schemaVersion;
  print(
    `restored ${report.source} → ${report.path} (${mebibytes(report.bytes)}, schema version ${report.schemaVersion}, ${report.tenants} tenants, ${report.runs} runs; integrity ok) in ${report.ms} ms${pending > 0 ? `; the next start applies ${pending} newer migrations` : ''}`,
  );
  return 0;
}
