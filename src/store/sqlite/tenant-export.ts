// `keel export` / `keel import` on SQLite (docs/operations.md, "Moving a tenant"): what
// is read and written is shared (../repositories/tenant-export.ts); this file opens the
// source and says where a memory vector is kept.
//
// Export reads through its own read-only connection in one read transaction (WAL: a
// snapshot), so it runs while a server owns the data dir; with --include-active it
// takes the data-dir lock instead, which refuses while a server runs. Import writes in
// one transaction of a store this process opened (and so owns).

import type { Database as SqliteDatabase, Statement } from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { KeelError } from '../../errors.ts';
import type { TenantVectors } from '../repositories/tenant-export.ts';
import { importTenant, readTenant } from '../repositories/tenant-export.ts';
import type {
  EmitRow,
  ExportRow,
  TenantDump,
  TenantExportOptions,
} from '../rules/tenant-export.ts';
import { Reads } from '../sql/steps.ts';
import { openConnection } from './connection.ts';
import type { StoreContext } from './context.ts';
import { sqliteDialect } from './dialect.ts';
import { acquireDataDirLock } from './lock.ts';
import { vectorTable, vectorWriter } from './memory.ts';
import { loadMigrations, migrationReport } from './migrations.ts';
import { drive, write } from './steps.ts';

/** Reads one tenant's rows in export order into `emit`; returns how many. */
export function exportSqliteTenant(
  path: string,
  options: TenantExportOptions,
  emit: EmitRow,
): number {
  const absolute = resolve(path);
  if (!existsSync(absolute)) {
    throw new KeelError(
      'CONFIG_INVALID',
      `no SQLite store at ${absolute} (--data-dir, --store-url)`,
    );
  }
  const lock = options.includeActive ? acquireDataDirLock(absolute) : null;
  try {
    const db = openConnection({ path: absolute, durability: 'full', readonly: true });
    try {
      const report = migrationReport(db, loadMigrations(), absolute);
      if (report.pending.length > 0) {
        throw new KeelError(
          'CONFIG_INVALID',
          `the SQLite store at ${absolute} is at schema ${report.current}, this keel exports ${report.latest}: run keel migrate first`,
        );
      }
      const statements = new Map<string, Statement>();
      const connection = {
        sql(text: string): Statement {
          let statement = statements.get(text);
          if (!statement) statements.set(text, (statement = db.prepare(text)));
          return statement;
        },
      };
      // The lock, when taken, already keeps every server away: no lease check (clock).
      const source = { vectors: exportVectors(db), clock: null };
      db.exec('BEGIN');
      try {
        return drive(connection, readTenant(new Reads(sqliteDialect), options, emit, source));
      } finally {
        db.exec('COMMIT');
      }
    } finally {
      db.close();
    }
  } finally {
    lock?.release();
  }
}

/** The fact's vector from its sqlite-vec table; a fact whose vector is gone has none. */
function attachVector(db: SqliteDatabase, row: ExportRow): void {
  const factId = row.fact_id as number;
  delete row.fact_id;
  row.vector = null;
  if (typeof row.dim === 'number') {
    const table = vectorTable(row.dim);
    const exists = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
      .get(table);
    const found = exists
      ? (db.prepare(`SELECT embedding FROM ${table} WHERE rowid = ?`).get(BigInt(factId)) as
          { embedding: Buffer } | undefined)
      : undefined;
    if (found) row.vector = Buffer.from(found.embedding);
  }
  // Stale on the target (keel memory reindex embeds it again) rather than half a vector.
  if (row.vector === null) {
    row.embedder = null;
    row.dim = null;
  }
}

function exportVectors(db: SqliteDatabase): TenantVectors {
  return {
    place: 'apart',
    *read(_db, row) {
      attachVector(db, row);
    },
    bind: () => null,
    write: null,
  };
}

/** Writes a checked dump in one transaction; refuses (writing nothing) if the tenant exists. */
export function importSqliteTenant(ctx: StoreContext, dump: TenantDump): number {
  const vectors: TenantVectors = {
    place: 'apart',
    *read() {},
    bind: () => null,
    // A memory fact's vector goes to its sqlite-vec table, as a put would write it.
    write: vectorWriter(ctx),
  };
  return write(ctx, (tx) => importTenant(tx, dump, vectors));
}
