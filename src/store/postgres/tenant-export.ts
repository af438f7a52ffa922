// `keel export` / `keel import` on PostgreSQL (docs/operations.md, "Moving a tenant"):
// the tables and value rules are rules/tenant-export.ts; this file is only the SQL.
// Export reads in one REPEATABLE READ READ ONLY transaction (one snapshot, while other
// processes keep writing); import writes in one transaction of the store's pool.

import type pg from 'pg';
import { KeelError } from '../../errors.ts';
import type { ExportRow, TenantDump } from '../rules/tenant-export.ts';
import {
  ACTIVE_RUN_STATUSES,
  TENANT_TABLES,
  activeRunsRefusal,
  insertRow,
  rowRefusal,
  selectTenantRows,
  tableSpec,
  tenantExistsRefusal,
  vectorBytes,
  vectorValues,
} from '../rules/tenant-export.ts';
import type { PgContext } from './context.ts';

export interface TenantExportOptions {
  tenant: string;
  includeActive: boolean;
}

export type EmitRow = (table: string, row: ExportRow) => void;

/** Reads one tenant's rows in export order into `emit` on a connected client. */
export async function readPostgresTenant(
  client: pg.ClientBase,
  options: TenantExportOptions,
  emit: EmitRow,
): Promise<number> {
  const { tenant } = options;
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  try {
    const found = await client.query('SELECT 1 FROM tenants WHERE name = $1', [tenant]);
    if (found.rowCount === 0) throw new KeelError('TENANT_NOT_FOUND', `tenant ${tenant} not found`);
    if (!options.includeActive) {
      const active = await client.query<{ run_id: string }>(
        'SELECT run_id FROM runs WHERE tenant = $1 AND status = ANY($2) ORDER BY queue_pos',
        [tenant, ACTIVE_RUN_STATUSES],
      );
      if (active.rows.length > 0) {
        throw activeRunsRefusal(
          tenant,
          active.rows.map((row) => row.run_id),
        );
      }
    }
    let count = 0;
    for (const spec of TENANT_TABLES) {
      const result = await client.query<Record<string, unknown>>(
        selectTenantRows(spec, '$1', 'column'),
        [tenant],
      );
      for (const raw of result.rows) {
        const row = raw as ExportRow;
        if (spec.table === 'memory_facts') {
          const values = raw.vector as number[] | null;
          row.vector = values === null ? null : vectorBytes(values);
        }
        emit(spec.table, row);
        count += 1;
      }
    }
    return count;
  } finally {
    await client.query('COMMIT');
  }
}

/** Writes a checked dump in one transaction; refuses (writing nothing) if the tenant exists. */
export async function importPostgresTenant(ctx: PgContext, dump: TenantDump): Promise<number> {
  return ctx.write(async (tx) => {
    const tenant = dump.header.tenant;
    if ((await tx.count('SELECT 1 FROM tenants WHERE name = $1', [tenant])) > 0) {
      throw tenantExistsRefusal(tenant);
    }
    for (const { table, row, line } of dump.rows) {
      const spec = tableSpec(table);
      const values = spec.columns.map((column) => {
        const value = row[column.name] ?? null;
        return column.kind === 'vector' && value instanceof Buffer ? vectorValues(value) : value;
      });
      await tx
        .rows(
          insertRow(spec, (index) => `$${index + 1}`, 'column'),
          values,
        )
        .catch((error: unknown) => {
          throw rowRefusal(line, table, error);
        });
    }
    return dump.rows.length;
  });
}
