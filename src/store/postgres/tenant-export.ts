// `keel export` / `keel import` on PostgreSQL (docs/operations.md, "Moving a tenant"):
// what is read and written is shared (../repositories/tenant-export.ts); this file
// opens the snapshot and says where a memory vector is kept (the fact row's real[]).
// Export reads in one REPEATABLE READ READ ONLY transaction (one snapshot, while other
// processes keep writing); import writes in one transaction of the store's pool.

import type pg from 'pg';
import type { TenantVectors } from '../repositories/tenant-export.ts';
import { importTenant, readTenant } from '../repositories/tenant-export.ts';
import type { EmitRow, TenantDump, TenantExportOptions } from '../rules/tenant-export.ts';
import { vectorBytes, vectorValues } from '../rules/tenant-export.ts';
import { raw } from '../sql/query.ts';
import { Reads } from '../sql/steps.ts';
import type { PgContext, Sql, SqlParam } from './context.ts';
import { DB_NOW_MS } from './context.ts';
import { postgresDialect } from './dialect.ts';
import { realArray } from './memory.ts';
import { drive, write } from './steps.ts';

const vectors: TenantVectors = {
  place: 'column',
  *read(_db, row) {
    const values = row.vector as unknown as number[] | null;
    row.vector = values === null ? null : vectorBytes(values);
  },
  bind: (bytes) => realArray(vectorValues(bytes)),
  write: null,
};

/** Statements on one connected client (the export's own, outside the store's pool). */
function clientSql(client: pg.ClientBase): Sql {
  const run = (text: string, params?: readonly SqlParam[]) =>
    client.query(text, params as unknown[] | undefined);
  return {
    rows: async <T>(text: string, params?: readonly SqlParam[]) =>
      (await run(text, params)).rows as T[],
    one: async <T>(text: string, params?: readonly SqlParam[]) =>
      (await run(text, params)).rows[0] as T | undefined,
    count: async (text: string, params?: readonly SqlParam[]) =>
      (await run(text, params)).rowCount ?? 0,
  };
}

/** Reads one tenant's rows in export order into `emit` on a connected client. */
export async function readPostgresTenant(
  client: pg.ClientBase,
  options: TenantExportOptions,
  emit: EmitRow,
): Promise<number> {
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  try {
    // Other processes may still run the tenant: with includeActive, their leases and the
    // scheduler's heartbeat are judged by the database's clock.
    const source = { vectors, clock: raw(DB_NOW_MS) };
    return await drive(
      clientSql(client),
      readTenant(new Reads(postgresDialect), options, emit, source),
    );
  } finally {
    await client.query('COMMIT');
  }
}

/** Writes a checked dump in one transaction; refuses (writing nothing) if the tenant exists. */
export function importPostgresTenant(ctx: PgContext, dump: TenantDump): Promise<number> {
  return write(ctx, (tx) => importTenant(tx, dump, vectors));
}
