// The SQLite backend's entry points: open a store, or run/check migrations for
// `keel migrate [--check]`.

import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Failpoints } from '../../failpoints.ts';
import { inertFailpoints } from '../../failpoints.ts';
import type { Durability } from './connection.ts';
import { openConnection, READER_PRAGMAS, setWalCheckpointBytes } from './connection.ts';
import { StoreContext } from './context.ts';
import { FullDiskGuard, RESERVE_FILE_NAME, freeDiskBytesIn } from './disk-reserve.ts';
import type { DataDirLock } from './lock.ts';
import { acquireDataDirLock } from './lock.ts';
import type { MigrationReport } from './migrations.ts';
import { applyMigrations, loadMigrations, migrationReport } from './migrations.ts';
import { SqliteStore } from './sqlite-store.ts';
import { upgradeUnshardedVectorTables, VECTOR_SHARDS } from './memory.ts';
import { defaultReadThreads, SqliteReadPool } from './read-pool.ts';
import { ReadWindow } from './read-window.ts';

export type { Durability } from './connection.ts';
export type { MigrationReport, AppliedMigration } from './migrations.ts';
export { deliveryBackoffMs } from '../rules/deliveries.ts';
export { lockPathFor, LOCK_FILE_NAME } from './lock.ts';
export type { SqliteStore } from './sqlite-store.ts';

export interface SqliteStoreOptions {
  /** The database file; its directory is the data dir the lock guards. */
  path: string;
  durability: Durability;
  failpoints?: Failpoints;
  /** Millisecond clock for leases, due times and timestamps; injectable for tests. */
  now?: () => number;
  /** Default true. false only for tests that open peer connections to one file. */
  exclusiveLock?: boolean;
  /**
   * Threads for memory's exact vector scan (started on the first semantic search);
   * 0 runs it on the main connection. Default: one per core, at most VECTOR_SHARDS.
   */
  readThreads?: number;
}

/** The read pool's size when nothing is configured. */
export function defaultMemorySearchThreads(): number {
  return defaultReadThreads(VECTOR_SHARDS);
}

function prepareDir(path: string): string {
  const absolute = resolve(path);
  mkdirSync(dirname(absolute), { recursive: true });
  return absolute;
}

/** Opens (creating if needed) and migrates the database; the returned store owns the data dir. */
export async function openSqliteStore(options: SqliteStoreOptions): Promise<SqliteStore> {
  const path = prepareDir(options.path);
  const now = options.now ?? Date.now;
  const lock: DataDirLock | null =
    options.exclusiveLock === false ? null : acquireDataDirLock(path);
  try {
    const db = openConnection({ path, durability: options.durability });
    let disk: FullDiskGuard | null = null;
    try {
      const migrations = loadMigrations();
      applyMigrations(db, migrations, path, now);
      const threads = options.readThreads ?? defaultMemorySearchThreads();
      const reads = new ReadWindow(db);
      // The reserve lives with the data dir its lock guards (a peer has neither).
      disk = new FullDiskGuard({
        reservePath: lock ? join(dirname(path), RESERVE_FILE_NAME) : null,
        checkpoint: () => {
          reads.close();
          db.pragma('wal_checkpoint(TRUNCATE)');
        },
        freePagesBytes: () =>
          Number(db.pragma('freelist_count', { simple: true })) *
          Number(db.pragma('page_size', { simple: true })),
        walCheckpointBytes: (bytes) => setWalCheckpointBytes(db, bytes),
        // A peer has no reserve but still re-checks, on the directory it writes into.
        freeDiskBytes: () => freeDiskBytesIn(dirname(path)),
      });
      const ctx = new StoreContext(
        db,
        now,
        options.failpoints ?? inertFailpoints,
        threads > 0 ? new SqliteReadPool(path, threads, READER_PRAGMAS) : null,
        disk,
        reads,
      );
      upgradeUnshardedVectorTables(ctx);
      const description = `sqlite ${path} (synchronous=${options.durability === 'full' ? 'FULL' : 'NORMAL'}, WAL)`;
      return new SqliteStore(ctx, lock, migrations, path, description);
    } catch (error) {
      // A guard made on a full disk is re-checking: it stops with the store it was for.
      disk?.stop();
      db.close();
      throw error;
    }
  } catch (error) {
    lock?.release();
    throw error;
  }
}

interface MigrateOptions {
  /** true: report only, change nothing (`keel migrate --check`). */
  check: boolean;
  durability?: Durability;
}

/**
 * `keel migrate`: applies pending migrations (taking the data-dir lock, so it refuses
 * while a server owns the dir) or, with check, only reports them. Throws
 * STORE_SCHEMA_NEWER for a database written by a newer keel, DATA_DIR_LOCKED when the
 * dir is owned.
 */
export async function migrateSqlite(
  path: string,
  options: MigrateOptions,
): Promise<MigrationReport> {
  const absolute = resolve(path);
  const migrations = loadMigrations();
  if (options.check) {
    if (!existsSync(absolute)) return migrationReport(null, migrations, absolute);
    const db = openConnection({
      path: absolute,
      durability: options.durability ?? 'full',
      readonly: true,
    });
    try {
      return migrationReport(db, migrations, absolute);
    } finally {
      db.close();
    }
  }
  prepareDir(absolute);
  const lock = acquireDataDirLock(absolute);
  try {
    const db = openConnection({ path: absolute, durability: options.durability ?? 'full' });
    try {
      return applyMigrations(db, migrations, absolute, Date.now);
    } finally {
      db.close();
    }
  } finally {
    lock.release();
  }
}
