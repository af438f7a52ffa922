// `keel export` / `keel import` on PostgreSQL (docs/operations.md, "Moving a tenant"):
// the tables and value rules are rules/tenant-export.ts; this file is only the SQL.
// Export reads in one REPEATABLE READ READ ONLY transaction (one snapshot, while other
// processes keep writing); import writes in one transaction of the store's pool.

import type pg from 'pg';
import { KeelError } from '../../errors.ts';
import type {
  EmitRow,
  ExportRow,
  SourceActivity,
  TenantDump,
  TenantExportOptions,
} from '../rules/tenant-export.ts';
import {
  activeRunsRefusal,
  rowRefusal,
  sourceInUseRefusal,
  tenantExistsRefusal,
  vectorBytes,
  vectorValues,
} from '../rules/tenant-export.ts';
import {
  ACTIVE_RUN_STATUSES,
  TENANT_TABLES,
  insertRows,
  selectTenantRows,
  tableSpec,
} from '../rules/tenant-tables.ts';
import type { PgContext, Tx } from './context.ts';
import { DB_NOW_MS } from './context.ts';

/** The leases and heartbeat sourceInUseRefusal judges, in the export's snapshot. */
async function sourceActivity(client: pg.ClientBase, tenant: string): Promise<SourceActivity> {
  const now = await client.query<{ now: string }>(`SELECT ${DB_NOW_MS} AS now`);
  const running = await client.query<{ run_id: string; lease_expires_at: string | null }>(
    `SELECT run_id, lease_expires_at FROM runs WHERE tenant = $1 AND status = 'running'`,
    [tenant],
  );
  const beat = await client.query<{ holder: string; beat_at: string }>(
    'SELECT holder, beat_at FROM scheduler_heartbeat WHERE id = 1',
  );
  const lastBeat = beat.rows[0];
  return {
    now: Number(now.rows[0]?.now),
    running: running.rows.map((row) => ({
      run_id: row.run_id,
      lease_expires_at: row.lease_expires_at === null ? null : Number(row.lease_expires_at),
    })),
    lastBeat:
      lastBeat === undefined
        ? null
        : { holder: lastBeat.holder, beat_at: Number(lastBeat.beat_at) },
  };
}

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
    if (options.includeActive) {
      const refusal = sourceInUseRefusal(tenant, await sourceActivity(client, tenant));
      if (refusal !== null) throw refusal;
    } else {
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

/**
 * Rows per INSERT: a tenant's rows go in batches of one table (a statement per row spent
 * ~0.8 ms each on round trips: 6 s for 7 000 rows).
 */
const BATCH_ROWS = 200;

type DumpRow = TenantDump['rows'][number];

/** Consecutive rows of one table, at most BATCH_ROWS each. */
function batches(rows: readonly DumpRow[]): DumpRow[][] {
  const out: DumpRow[][] = [];
  for (const row of rows) {
    const last = out.at(-1);
    if (last && last[0]?.table === row.table && last.length < BATCH_ROWS) last.push(row);
    else out.push([row]);
  }
  return out;
}

async function insertBatch(tx: Tx, batch: readonly DumpRow[]): Promise<void> {
  const spec = tableSpec(batch[0]?.table ?? '');
  const values = batch.flatMap(({ row }) =>
    spec.columns.map((column) => {
      const value = row[column.name] ?? null;
      return column.kind === 'vector' && value instanceof Buffer ? vectorValues(value) : value;
    }),
  );
  await tx.rows(
    insertRows(spec, batch.length, (index) => `$${index + 1}`, 'column'),
    values,
  );
}

/** Writes a checked dump in one transaction; refuses (writing nothing) if the tenant exists. */
export async function importPostgresTenant(ctx: PgContext, dump: TenantDump): Promise<number> {
  return ctx.write(async (tx) => {
    const tenant = dump.header.tenant;
    if ((await tx.count('SELECT 1 FROM tenants WHERE name = $1', [tenant])) > 0) {
      throw tenantExistsRefusal(tenant);
    }
    for (const batch of batches(dump.rows)) {
      await tx.rows('SAVEPOINT import_batch');
      try {
        await insertBatch(tx, batch);
      } catch (error) {
        // Which row: the batch again, one row at a time, to name the line refused.
        await tx.rows('ROLLBACK TO SAVEPOINT import_batch');
        for (const one of batch) {
          await insertBatch(tx, [one]).catch((rowError: unknown) => {
            throw rowRefusal(one.line, one.table, rowError);
          });
        }
        throw rowRefusal(batch[0]?.line ?? 0, batch[0]?.table ?? '', error);
      }
    }
    return dump.rows.length;
  });
}
