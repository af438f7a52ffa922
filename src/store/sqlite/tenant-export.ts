// `keel export` / `keel import` on SQLite (docs/operations.md, "Moving a tenant"): the
// tables and value rules are rules/tenant-export.ts; this file is only the SQL.
//
// Export reads through its own read-only connection in one read transaction (WAL: a
// snapshot), so it runs while a server owns the data dir; with --include-active it
// takes the data-dir lock instead, which refuses while a server runs. Import writes in
// one transaction of a store this process opened (and so owns).

import type { Database as SqliteDatabase } from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { KeelError } from '../../errors.ts';
import type {
  EmitRow,
  ExportRow,
  TenantDump,
  TenantExportOptions,
} from '../rules/tenant-export.ts';
import { activeRunsRefusal, rowRefusal, tenantExistsRefusal } from '../rules/tenant-export.ts';
import {
  ACTIVE_RUN_STATUSES,
  TENANT_TABLES,
  insertRow,
  selectTenantRows,
  tableSpec,
} from '../rules/tenant-tables.ts';
import { openConnection } from './connection.ts';
import type { StoreContext } from './context.ts';
import { acquireDataDirLock } from './lock.ts';
import { vectorTable, writeVector } from './memory.ts';
import { loadMigrations, migrationReport } from './migrations.ts';

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
      db.exec('BEGIN');
      try {
        return readTenant(db, options, emit);
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

function readTenant(db: SqliteDatabase, options: TenantExportOptions, emit: EmitRow): number {
  const { tenant } = options;
  if (db.prepare('SELECT 1 FROM tenants WHERE name = ?').get(tenant) === undefined) {
    throw new KeelError('TENANT_NOT_FOUND', `tenant ${tenant} not found`);
  }
  if (!options.includeActive) {
    const active = db
      .prepare(
        `SELECT run_id FROM runs WHERE tenant = ? AND status IN (${ACTIVE_RUN_STATUSES.map(() => '?').join(', ')}) ORDER BY queue_pos`,
      )
      .pluck()
      .all(tenant, ...ACTIVE_RUN_STATUSES) as string[];
    if (active.length > 0) throw activeRunsRefusal(tenant, active);
  }
  let count = 0;
  for (const spec of TENANT_TABLES) {
    const rows = db.prepare(selectTenantRows(spec, '?', 'apart')).iterate(tenant);
    for (const raw of rows as Iterable<Record<string, unknown>>) {
      const row = raw as ExportRow;
      if (spec.table === 'schedules') row.enabled = row.enabled === 1;
      if (spec.table === 'memory_facts') attachVector(db, row);
      emit(spec.table, row);
      count += 1;
    }
  }
  return count;
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

/** Writes a checked dump in one transaction; refuses (writing nothing) if the tenant exists. */
export function importSqliteTenant(ctx: StoreContext, dump: TenantDump): number {
  return ctx.write(() => {
    const tenant = dump.header.tenant;
    if (ctx.sql('SELECT 1 FROM tenants WHERE name = ?').get(tenant) !== undefined) {
      throw tenantExistsRefusal(tenant);
    }
    for (const { table, row, line } of dump.rows) {
      try {
        insertSqliteRow(ctx, tenant, table, row);
      } catch (error) {
        throw rowRefusal(line, table, error);
      }
    }
    return dump.rows.length;
  });
}

/** One row; a memory fact's vector goes to its sqlite-vec table, as a put would write it. */
function insertSqliteRow(ctx: StoreContext, tenant: string, table: string, row: ExportRow): void {
  const spec = tableSpec(table);
  const values = spec.columns
    .filter((column) => column.kind !== 'vector')
    .map((column) => {
      const value = row[column.name] ?? null;
      return column.kind === 'bool' ? (value ? 1 : 0) : value;
    });
  const result = ctx.sql(insertRow(spec, () => '?', 'apart')).run(...values);
  const vector = row.vector;
  if (table === 'memory_facts' && vector instanceof Buffer) {
    writeVector(
      ctx,
      {
        fact_id: Number(result.lastInsertRowid),
        tenant,
        namespace: String(row.namespace),
        dim: null,
      },
      {
        embedder: String(row.embedder),
        values: new Float32Array(
          vector.buffer.slice(vector.byteOffset, vector.byteOffset + vector.byteLength),
        ),
      },
    );
  }
}
