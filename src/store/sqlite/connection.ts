// Opens the SQLite database with the settings docs/store.md fixes ("Durability and
// migrations"), then reads every setting back: a driver or filesystem that silently
// ignores one (journal_mode=WAL on some network filesystems) must stop the start, not
// weaken durability unnoticed.

import Database from 'better-sqlite3';
import type { Database as SqliteDatabase } from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { KeelError } from '../../errors.ts';

export type Durability = 'full' | 'process';

const BUSY_TIMEOUT_MS = 5000;
const MMAP_BYTES = 1024 * 1024 * 1024;
/**
 * The page size of a database this process creates (an existing file keeps its own).
 * A commit appends every page it touched to the WAL whole, and a turn's rows are a few
 * hundred bytes spread over the runs table's indexes, the events, the entries and the
 * usage rows: with SQLite's default 4 KiB pages a turn wrote ~165 KiB for ~3 KiB of
 * rows; with PAGE_BYTES it writes half of that at the same CPU (docs/benchmarks.md,
 * "turns"). Large values (artifacts, memory's vectors) pay for it in overflow pages
 * (docs/store.md); smaller still would push ordinary rows into them too.
 */
export const PAGE_BYTES = 1024;
/**
 * The WAL size at which a commit checkpoints it into the database (SQLite counts it in
 * pages: 1000 by default, 4 MB with the 4 KiB pages it assumes). A checkpoint writes each
 * page the WAL holds once, however often the WAL rewrote it, so the hot pages of the runs
 * in flight (their runs rows, index leaves, the last journal pages) cost less the longer
 * the WAL runs: 1000 of PAGE_BYTES pages wrote 75 KiB per turn, 4 MiB 67 KiB
 * (docs/benchmarks.md, "turns"). Kept in bytes so a database with other pages gets the
 * same WAL; recovery after a crash reads about this much more.
 */
export const WAL_CHECKPOINT_BYTES = 4 * 1024 * 1024;
/**
 * The writer's page cache, as PRAGMA cache_size takes it (negative: KiB): SQLite's own
 * default of 2 MiB, not better-sqlite3's 16 MiB. When a b-tree page splits, SQLite
 * renumbers the new pages through a temporary page number far past the end of the file
 * (the page at 1 GiB), and the commit after it scans the cache's whole hash table to
 * drop that page, one slot per cached page. With 1 KiB pages the splits are four times
 * as frequent and a 16 MiB cache holds 16 000 pages: those scans were 4.6 % of a turn's
 * CPU (perf), 1.0 % with 2 MiB. Reads of the database file go through the memory map
 * (MMAP_BYTES, the file's first 1 GiB), not this cache; it holds the pages read from the
 * WAL and the ones a write changes, and the reads from the WAL did not grow (perf: pread
 * 0.26 → 0.18 %).
 */
export const WRITER_CACHE_KIB = 2000;

/** PRAGMA synchronous reads back as a number: FULL = 2, NORMAL = 1. */
const SYNCHRONOUS_LEVEL: Record<Durability, { name: string; value: number }> = {
  full: { name: 'FULL', value: 2 },
  process: { name: 'NORMAL', value: 1 },
};

interface ConnectionOptions {
  path: string;
  durability: Durability;
  readonly?: boolean;
}

/**
 * sqlite-vec's native library ships in a per-platform optional dependency, which
 * `npm install --omit=optional` leaves out: say so instead of a bare load error.
 */
export function loadSqliteVec(
  db: SqliteDatabase,
  load: (db: SqliteDatabase) => void = sqliteVec.load,
): void {
  try {
    load(db);
  } catch (error) {
    throw new KeelError(
      'STORE_UNAVAILABLE',
      `the SQLite store needs sqlite-vec's native library, which could not be loaded (${(error as Error).message}). It comes in an optional dependency (sqlite-vec-${process.platform}-${process.arch}) that \`npm install --omit=optional\` leaves out: install with optional dependencies (\`npm install --include=optional\`), or use PostgreSQL (store.url)`,
    );
  }
}

export function openConnection(options: ConnectionOptions): SqliteDatabase {
  const db = new Database(options.path, {
    readonly: options.readonly ?? false,
    fileMustExist: options.readonly ?? false,
  });
  try {
    // sqlite-vec on every connection: memory's vec0 tables (and the triggers that
    // delete from them when a fact or a tenant goes) need it, readers included.
    loadSqliteVec(db);
    applySettings(db, options);
    assertSettings(db, options);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/** The settings a reader connection shares with the main one (read-pool.ts). */
export const READER_PRAGMAS: readonly string[] = [
  `busy_timeout = ${BUSY_TIMEOUT_MS}`,
  // Reads through a memory map instead of read() into the page cache: an exact vector
  // scan of memory (100k facts ≈ 40 MB of vec0 chunks per query) drops from ~35 ms to
  // ~14 ms. Writes still go through the WAL; this changes no durability guarantee.
  `mmap_size = ${MMAP_BYTES}`,
];

function applySettings(db: SqliteDatabase, options: ConnectionOptions): void {
  // Only takes effect before the first table exists (a no-op on an existing file).
  if (!options.readonly) db.pragma(`page_size = ${PAGE_BYTES}`);
  for (const pragma of READER_PRAGMAS) db.pragma(pragma);
  if (!options.readonly) db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${SYNCHRONOUS_LEVEL[options.durability].name}`);
  db.pragma('foreign_keys = ON');
  if (!options.readonly) {
    db.pragma(`cache_size = -${WRITER_CACHE_KIB}`);
    setWalCheckpointBytes(db, WAL_CHECKPOINT_BYTES);
  }
}

/** Lets the WAL grow to about `bytes` before a commit checkpoints it (in the file's pages). */
export function setWalCheckpointBytes(db: SqliteDatabase, bytes: number): void {
  const pageBytes = Number(readPragma(db, 'page_size'));
  db.pragma(`wal_autocheckpoint = ${Math.max(1, Math.round(bytes / pageBytes))}`);
}

function readPragma(db: SqliteDatabase, name: string): unknown {
  return db.pragma(name, { simple: true });
}

function assertSettings(db: SqliteDatabase, options: ConnectionOptions): void {
  const expected: [string, unknown][] = [
    ['journal_mode', 'wal'],
    ['synchronous', SYNCHRONOUS_LEVEL[options.durability].value],
    ['foreign_keys', 1],
    ['busy_timeout', BUSY_TIMEOUT_MS],
  ];
  for (const [name, value] of expected) {
    const actual = readPragma(db, name);
    const normalized = typeof actual === 'string' ? actual.toLowerCase() : actual;
    // A read-only open of a database that was never written in WAL mode stays as is.
    if (name === 'journal_mode' && options.readonly) continue;
    if (normalized !== value) {
      throw new KeelError(
        'STORE_SETTINGS_INVALID',
        `SQLite setting ${name} is ${String(actual)}, keel needs ${String(value)} (database ${options.path})`,
      );
    }
  }
}
