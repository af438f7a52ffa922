// `keel export` / `keel import` (docs/operations.md, "Moving a tenant"), for both
// backends: reading a tenant's rows in export order and writing a checked dump in one
// transaction. The tables and columns are ../rules/tenant-tables.ts, the file's values
// and refusals ../rules/tenant-export.ts. Per backend stays only how the source is
// opened (sqlite/tenant-export.ts: a read-only connection beside a running server;
// postgres/tenant-export.ts: one snapshot on a client of its own) and where a memory
// vector is kept (TenantVectors).

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
} from '../rules/tenant-export.ts';
import type { VectorPlace } from '../rules/tenant-tables.ts';
import {
  ACTIVE_RUN_STATUSES,
  TENANT_TABLES,
  columnNames,
  insertRows,
  selectTenantRows,
  tableSpec,
} from '../rules/tenant-tables.ts';
import { KeelError } from '../../errors.ts';
import { fromBoundText, join, sql } from '../sql/query.ts';
import type { Query, SqlValue } from '../sql/query.ts';
import type { Op, Reads, Writes } from '../sql/steps.ts';
import type { VectorWriter } from './memory.ts';

/** Where a backend keeps a memory fact's vector, as the export and import see it. */
export interface TenantVectors {
  /** 'column': on the fact row (PostgreSQL's real[]); 'apart': tables of their own (SQLite). */
  readonly place: VectorPlace;
  /**
   * Sets the exported fact row's `vector` (float32 bytes, or null) from what its select
   * read: the vector column ('column') or the fact_id ('apart', which it removes).
   */
  read(db: Reads, row: ExportRow): Op<void>;
  /** 'column': the vector as the fact row binds it. */
  bind(bytes: Buffer): SqlValue;
  /** 'apart': stores an imported fact's vector after its row (memory.ts, VectorWriter). */
  readonly write: VectorWriter | null;
}

export interface TenantSource {
  vectors: TenantVectors;
  /**
   * With includeActive, the store clock the lease check reads (PostgreSQL: other
   * processes may still run the tenant, sourceInUseRefusal); null where opening the
   * source made sure no server runs (SQLite: the data dir's lock).
   */
  clock: Query | null;
}

/** The leases and heartbeat sourceInUseRefusal judges, in the export's snapshot. */
function* sourceActivity(db: Reads, tenant: string, clock: Query): Op<SourceActivity> {
  const now = yield* db.one<{ now: number }>(sql`SELECT ${clock} AS now`);
  const running = yield* db.rows<{ run_id: string; lease_expires_at: number | null }>(
    sql`SELECT run_id, lease_expires_at FROM runs WHERE tenant = ${tenant} AND status = 'running'`,
  );
  const beat = yield* db.one<{ holder: string; beat_at: number }>(
    sql`SELECT holder, beat_at FROM scheduler_heartbeat WHERE id = 1`,
  );
  return {
    now: Number(now?.now),
    running: running.map((row) => ({
      run_id: row.run_id,
      lease_expires_at: row.lease_expires_at === null ? null : Number(row.lease_expires_at),
    })),
    lastBeat: beat === undefined ? null : { holder: beat.holder, beat_at: Number(beat.beat_at) },
  };
}

/** Reads one tenant's rows in export order into `emit` (inside one snapshot); returns how many. */
export function* readTenant(
  db: Reads,
  options: TenantExportOptions,
  emit: EmitRow,
  source: TenantSource,
): Op<number> {
  const { tenant } = options;
  if (!(yield* db.one(sql`SELECT 1 AS found FROM tenants WHERE name = ${tenant}`))) {
    throw new KeelError('TENANT_NOT_FOUND', `tenant ${tenant} not found`);
  }
  if (!options.includeActive) {
    const statuses = join(
      ACTIVE_RUN_STATUSES.map((status) => sql`${status}`),
      ', ',
    );
    const active = yield* db.rows<{ run_id: string }>(
      sql`SELECT run_id FROM runs WHERE tenant = ${tenant} AND status IN (${statuses})
          ORDER BY queue_pos`,
    );
    if (active.length > 0) {
      throw activeRunsRefusal(
        tenant,
        active.map((row) => row.run_id),
      );
    }
  } else if (source.clock) {
    const refusal = sourceInUseRefusal(tenant, yield* sourceActivity(db, tenant, source.clock));
    if (refusal !== null) throw refusal;
  }
  let count = 0;
  for (const spec of TENANT_TABLES) {
    const query = fromBoundText<string>((bind) =>
      selectTenantRows(spec, bind(tenant)(), source.vectors.place),
    );
    // A fact's vector is read by another statement per row, which SQLite cannot run while
    // a statement iterates: facts come whole, every other table (runs' events and entries
    // are the large ones) a row at a time.
    const rows =
      spec.table === 'memory_facts'
        ? yield* db.rows<ExportRow>(query)
        : yield* db.each<ExportRow>(query);
    const bools = spec.columns.filter((column) => column.kind === 'bool');
    for (const row of rows) {
      // SQLite keeps a boolean as 0 or 1.
      for (const { name } of bools) if (typeof row[name] === 'number') row[name] = row[name] === 1;
      if (spec.table === 'memory_facts') yield* source.vectors.read(db, row);
      emit(spec.table, row);
      count += 1;
    }
  }
  return count;
}

/**
 * Rows per INSERT: a tenant's rows go in batches of one table (on PostgreSQL a statement
 * per row spent ~0.8 ms each on round trips: 6 s for 7 000 rows).
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

function* insertBatch(
  tx: Writes,
  tenant: string,
  batch: readonly DumpRow[],
  vectors: TenantVectors,
): Op<void> {
  const spec = tableSpec(batch[0]?.table ?? '');
  const kinds = new Map(spec.columns.map((column) => [column.name, column.kind]));
  const names = columnNames(spec, vectors.place);
  const values = batch.flatMap(({ row }) =>
    names.map((name): SqlValue => {
      const value = row[name] ?? null;
      return kinds.get(name) === 'vector' && value instanceof Buffer ? vectors.bind(value) : value;
    }),
  );
  const insert = fromBoundText<SqlValue>((bind) =>
    insertRows(spec, batch.length, (index) => bind(values[index] ?? null)(), vectors.place),
  );
  const write = vectors.write;
  if (spec.table !== 'memory_facts' || write === null) {
    yield* tx.run(insert);
    return;
  }
  // The vectors kept apart go in after their facts, found by the rows' keys.
  const inserted = yield* tx.rows<{ fact_id: number; namespace: string; id: string }>(
    sql`${insert} RETURNING fact_id, namespace, id`,
  );
  const factIds = new Map(inserted.map((fact) => [`${fact.namespace}\u0000${fact.id}`, fact]));
  for (const { row } of batch) {
    const vector = row.vector;
    if (!(vector instanceof Buffer)) continue;
    const fact = factIds.get(`${String(row.namespace)}\u0000${String(row.id)}`);
    if (!fact) throw new Error('imported fact missing after its insert');
    yield* write(
      tx,
      { fact_id: fact.fact_id, tenant, namespace: fact.namespace, dim: null },
      {
        embedder: String(row.embedder),
        values: new Float32Array(
          vector.buffer.slice(vector.byteOffset, vector.byteOffset + vector.byteLength),
        ),
      },
    );
  }
}

/** Writes a checked dump in one transaction; refuses (writing nothing) if the tenant exists. */
export function* importTenant(tx: Writes, dump: TenantDump, vectors: TenantVectors): Op<number> {
  const tenant = dump.header.tenant;
  if (yield* tx.one(sql`SELECT 1 AS found FROM tenants WHERE name = ${tenant}`)) {
    throw tenantExistsRefusal(tenant);
  }
  for (const batch of batches(dump.rows)) {
    yield* tx.run(sql`SAVEPOINT import_batch`);
    try {
      yield* insertBatch(tx, tenant, batch, vectors);
    } catch (error) {
      // Which row: the batch again, one row at a time, to name the line refused.
      yield* tx.run(sql`ROLLBACK TO SAVEPOINT import_batch`);
      for (const one of batch) {
        try {
          yield* insertBatch(tx, tenant, [one], vectors);
        } catch (rowError) {
          throw rowRefusal(one.line, one.table, rowError);
        }
      }
      throw rowRefusal(batch[0]?.line ?? 0, batch[0]?.table ?? '', error);
    }
  }
  return dump.rows.length;
}
