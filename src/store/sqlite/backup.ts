// `keel backup` and `keel restore` on SQLite (docs/operations.md). Everything keel keeps
// lives in keel.db: artifacts are rows, memory's vector shards are sqlite-vec tables in
// the same file. The rest of a data dir is remade at start (keel.reserve, keel.lock) or
// derived (cache/: glove-sif's word vectors), so a backup is one SQLite file.
//
// The backup is SQLite's online backup API on a read-only connection of its own, so a
// serving keel keeps writing meanwhile (WAL: readers and the writer do not block each
// other). It copies every page in one step, i.e. inside one read transaction: one
// snapshot, every commit before it and none after. Copied a few pages per step instead,
// the backup would restart whenever another connection commits between two steps, and
// under a steady write load it might never finish.
//
// A backup is written beside its destination under a temporary name, checked, and only
// then linked into place: a failed or interrupted backup never leaves a file that looks
// like one. A restore is copied into the data dir under a temporary name, checked, and
// renamed over keel.db under the data dir's lock, so it refuses while a server owns it.

import Database from 'better-sqlite3';
import type { Database as SqliteDatabase } from 'better-sqlite3';
import {
  closeSync,
  chownSync,
  constants,
  copyFileSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { KeelError } from '../../errors.ts';
import { publishNewFile } from '../../publish-new-file.ts';
import { loadSqliteVec, openConnection } from './connection.ts';
import { acquireDataDirLock, lockPathFor } from './lock.ts';
import { loadMigrations, migrationReport } from './migrations.ts';

/** What a backup or a restored database holds, read from the checked copy. */
export interface KeelDatabaseSummary {
  path: string;
  bytes: number;
  schemaVersion: number;
  /** The newest schema this keel knows; above schemaVersion, the next start migrates. */
  latestVersion: number;
  tenants: number;
  runs: number;
}

export interface BackupReport extends KeelDatabaseSummary {
  source: string;
  ms: number;
}

export interface RestoreReport extends KeelDatabaseSummary {
  source: string;
  /** Where the database that was replaced went (with --force); null when there was none. */
  setAside: string | null;
  ms: number;
}

/** The 16 bytes every SQLite database file starts with. */
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');
/** sqlite3_backup_step's page count: the whole database in one step (see the top). */
const ALL_PAGES = 0x7fffffff;
/** The files SQLite keeps beside a database in WAL mode. */
const SIDE_SUFFIXES = ['-wal', '-shm', '-journal'] as const;

function invalid(path: string, why: string): KeelError {
  return new KeelError('BACKUP_INVALID', `${path} is not a usable keel database: ${why}`);
}

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function removeWithSideFiles(path: string): void {
  for (const suffix of ['', ...SIDE_SUFFIXES]) rmSync(`${path}${suffix}`, { force: true });
}

function existsError(path: string, what: string): KeelError {
  return new KeelError(
    'BACKUP_TARGET_EXISTS',
    `${what} ${path} already exists; pass --force to replace it`,
  );
}

function refuseExisting(path: string, what: string): void {
  if (existsSync(path)) throw existsError(path, what);
}

/** A cheap look at the first bytes before copying a file that may be anything. */
function assertSqliteFile(path: string): void {
  let stats;
  try {
    stats = statSync(path);
  } catch {
    throw invalid(path, 'no such file');
  }
  if (!stats.isFile()) throw invalid(path, 'not a regular file');
  const header = Buffer.alloc(SQLITE_HEADER.length);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  if (!header.equals(SQLITE_HEADER)) throw invalid(path, 'not an SQLite database');
}

function count(db: SqliteDatabase, table: string): number {
  return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
}

/**
 * Checks a database copy as keel would rely on it: keel's migrations (the same names for
 * the versions this keel knows; STORE_SCHEMA_NEWER past them), SQLite's full integrity
 * check and the foreign keys. `db` is a connection to the copy `file`, not to a live
 * database; messages name `path`, the file the operator knows.
 */
function checkKeelDatabase(db: SqliteDatabase, file: string, path: string): KeelDatabaseSummary {
  try {
    return checkOpenDatabase(db, file, path);
  } catch (error) {
    // A page SQLite cannot read (SQLITE_CORRUPT, SQLITE_NOTADB) fails a read before the
    // integrity check gets to say so.
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && /^SQLITE_(CORRUPT|NOTADB)/.test(code)) {
      throw invalid(path, `SQLite cannot read it (${(error as Error).message})`);
    }
    throw error;
  }
}

function checkOpenDatabase(db: SqliteDatabase, file: string, path: string): KeelDatabaseSummary {
  const migrations = loadMigrations();
  const hasMigrations = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
    .get();
  if (!hasMigrations) throw invalid(path, 'it has no schema_migrations table');
  const known = new Map(migrations.map((migration) => [migration.version, migration.name]));
  const report = migrationReport(db, migrations, path);
  for (const applied of report.applied) {
    if (known.get(applied.version) !== applied.name) {
      throw invalid(
        path,
        `its migration ${applied.version} is "${applied.name}", keel's is "${known.get(applied.version) ?? 'none'}"`,
      );
    }
  }
  if (report.current === 0) throw invalid(path, 'no migration was ever applied to it');
  const problems = (db.pragma('integrity_check(20)') as { integrity_check: string }[]).map(
    (row) => row.integrity_check,
  );
  if (problems.length !== 1 || problems[0] !== 'ok') {
    throw invalid(path, `SQLite's integrity check failed: ${problems.join('; ')}`);
  }
  const dangling = (db.pragma('foreign_key_check') as { table: string }[]).length;
  if (dangling > 0) throw invalid(path, `${dangling} rows break foreign keys`);
  return {
    path,
    bytes: statSync(file).size,
    schemaVersion: report.current,
    latestVersion: report.latest,
    tenants: count(db, 'tenants'),
    runs: count(db, 'runs'),
  };
}

/** Opens a copy keel made (never a live database) with what its tables need (vec0). */
function openCopy(path: string): SqliteDatabase {
  const db = new Database(path, { fileMustExist: true });
  try {
    loadSqliteVec(db);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Backs the database at `source` up to `destination`, consistent while a server writes.
 * Refuses an existing destination unless `force`. The file is a plain SQLite database in
 * rollback-journal mode (one file; keel turns WAL on when it opens it), mode 0600: it
 * holds the tenants' secrets and token hashes.
 */
export async function backupSqlite(
  source: string,
  destination: string,
  options: { force: boolean },
): Promise<BackupReport> {
  const started = Date.now();
  const from = resolve(source);
  const to = resolve(destination);
  if (!existsSync(from)) {
    throw new KeelError('STORE_UNAVAILABLE', `no keel database at ${from}: nothing to back up`);
  }
  if (to === from) throw invalid(to, 'it is the database being backed up');
  if (!options.force) refuseExisting(to, 'the backup file');
  const partial = `${dirname(to)}/.${basename(to)}.partial-${process.pid}`;
  removeWithSideFiles(partial);
  // Created here, empty and private, so the backup never exists readable by others.
  closeSync(openSync(partial, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o600));
  try {
    const db = openConnection({ path: from, durability: 'full', readonly: true });
    try {
      await db.backup(partial, { progress: () => ALL_PAGES });
    } finally {
      db.close();
    }
    const copy = openCopy(partial);
    let summary: KeelDatabaseSummary;
    try {
      // The copy carries the source's WAL flag: a single file travels better.
      copy.pragma('journal_mode = DELETE');
      summary = checkKeelDatabase(copy, partial, from);
    } finally {
      copy.close();
    }
    fsyncPath(partial);
    if (options.force) renameSync(partial, to);
    else publishNewFile(partial, to, () => existsError(to, 'the backup file'));
    fsyncPath(dirname(to));
    return { ...summary, path: to, source: from, ms: Date.now() - started };
  } finally {
    removeWithSideFiles(partial);
  }
}

/**
 * keel.db.before-restore-20261203T060102Z: sortable, no characters a shell minds; a
 * second restore within the same second gets -2, -3 … rather than replacing the first.
 */
function asideName(target: string, now: number): string {
  const stamp = new Date(now)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const base = `${target}.before-restore-${stamp}`;
  let name = base;
  for (let n = 2; existsSync(name); n += 1) name = `${base}-${n}`;
  return name;
}

/**
 * Run as root (`sudo keel restore` into a service's data dir, docs/deploy.md), the
 * restored database and a lock file this process created would belong to root, mode
 * 0600: the service's own user (systemd's DynamicUser) could no longer open them. They
 * are given to the data dir's owner; as anyone else, files are already that user's.
 */
function giveToDirOwner(paths: readonly string[], dir: string): void {
  if (process.getuid?.() !== 0) return;
  const { uid, gid } = statSync(dir);
  for (const path of paths) if (existsSync(path)) chownSync(path, uid, gid);
}

/**
 * Restores the keel database `source` (a `keel backup` file, or a keel.db copied from a
 * stopped keel) as the database at `target`. Takes the data dir's lock, so it refuses
 * while a keel process owns it (DATA_DIR_LOCKED); refuses an existing database unless
 * `force`, which keeps it aside (with its WAL) under asideName. Nothing in the data dir
 * changes until the copy has passed every check.
 */
export async function restoreSqlite(
  source: string,
  target: string,
  options: { force: boolean; now?: () => number },
): Promise<RestoreReport> {
  const started = Date.now();
  const from = resolve(source);
  const to = resolve(target);
  assertSqliteFile(from);
  if (from === to) throw invalid(from, 'it is the database being restored into');
  mkdirSync(dirname(to), { recursive: true });
  const lock = acquireDataDirLock(to);
  const partial = `${to}.restoring-${process.pid}`;
  try {
    if (!options.force) refuseExisting(to, 'the database');
    removeWithSideFiles(partial);
    copyFileSync(from, partial, constants.COPYFILE_EXCL);
    const copy = openCopy(partial);
    let summary: KeelDatabaseSummary;
    try {
      summary = checkKeelDatabase(copy, partial, from);
      // A restored database should leave no WAL beside it for the rename below.
      copy.pragma('journal_mode = DELETE');
    } finally {
      copy.close();
    }
    fsyncPath(partial);
    let setAside: string | null = null;
    if (existsSync(to)) {
      setAside = asideName(to, (options.now ?? Date.now)());
      // The WAL goes with its database: left beside the new keel.db, SQLite would replay
      // the old database's last commits into it.
      for (const suffix of ['', ...SIDE_SUFFIXES]) {
        if (existsSync(`${to}${suffix}`)) renameSync(`${to}${suffix}`, `${setAside}${suffix}`);
      }
    }
    giveToDirOwner([partial, lockPathFor(to)], dirname(to));
    renameSync(partial, to);
    fsyncPath(dirname(to));
    return { ...summary, path: to, source: from, setAside, ms: Date.now() - started };
  } finally {
    removeWithSideFiles(partial);
    lock.release();
  }
}
