// Memory facts on SQLite: putting a fact with its vector and the
// reindex reads/writes (reading, listing and deleting are shared:
// ../repositories/memory.ts). Vectors live in one sqlite-vec table per
// dimension (memory_vec_<dim>), partitioned by (tenant, namespace, embedder), so a KNN
// query can only ever see vectors of one embedder (memory-search.ts).

import type { MemoryFact } from '../../types.ts';
import type {
  MemoryEmbedderCount,
  MemoryPutInput,
  MemoryStaleFact,
  MemoryVector,
  MemoryVectorUpdate,
} from '../store.ts';
import type { StoreContext } from './context.ts';
import type { MemoryFactRow } from '../rules/memory.ts';
import { checkDimension, checkVector, toMemoryFact, toStaleFact } from '../rules/memory.ts';
import { requireStorageQuota, requireTenant } from './guards.ts';
import { memoryFactBytes } from '../rules/tenant-usage.ts';

export interface MemoryRow extends MemoryFactRow {
  embedder: string | null;
  dim: number | null;
}

export const VECTOR_SHARDS = 4;

/** The shard of a fact: its row id spreads a namespace evenly over the shards. */
function vectorShard(factId: number): number {
  return factId % VECTOR_SHARDS;
}

/** The vec0 partition of (tenant, namespace, embedder, shard): JSON keeps it unambiguous. */
export function vectorPartition(
  tenant: string,
  namespace: string,
  embedder: string,
  shard: number,
): string {
  return JSON.stringify([tenant, namespace, embedder, shard]);
}

export function vectorTable(dim: number): string {
  checkDimension(dim);
  return `memory_vectors_${dim}`;
}

export function vectorTableExists(ctx: StoreContext, dim: number): boolean {
  return (
    ctx
      .sql("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
      .get(vectorTable(dim)) !== undefined
  );
}

/** Creates the vec0 table of one dimension and its cleanup trigger (inside a write). */
function ensureVectorTable(ctx: StoreContext, dim: number): string {
  const table = vectorTable(dim);
  if (vectorTableExists(ctx, dim)) return table;
  // Every embedder returns unit vectors, and on unit vectors the L2 order is the cosine
  // order (|a − b|² = 2 − 2·cos): sqlite-vec's L2 scan is ~40 % faster than its cosine
  // scan, and a zero vector (a text without words) gets a distance instead of NaN.
  ctx.db.exec(
    `CREATE VIRTUAL TABLE ${table} USING vec0(part TEXT PARTITION KEY, embedding float[${dim}] distance_metric=l2);
     CREATE TRIGGER ${table}_cleanup AFTER DELETE ON memory_facts WHEN old.dim = ${dim}
       BEGIN DELETE FROM ${table} WHERE rowid = old.fact_id; END;`,
  );
  return table;
}

function vectorBytes(values: Float32Array): Buffer {
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength);
}

/** Replaces the fact's vector (deleting one of another dimension) and records its embedder. */
export function writeVector(ctx: StoreContext, row: MemoryRow, vector: MemoryVector): void {
  checkVector(vector);
  const dim = vector.values.length;
  if (row.dim !== null && vectorTableExists(ctx, row.dim)) {
    ctx.sql(`DELETE FROM ${vectorTable(row.dim)} WHERE rowid = ?`).run(BigInt(row.fact_id));
  }
  const table = ensureVectorTable(ctx, dim);
  ctx
    .sql(`INSERT INTO ${table} (rowid, part, embedding) VALUES (?, ?, ?)`)
    .run(
      BigInt(row.fact_id),
      vectorPartition(row.tenant, row.namespace, vector.embedder, vectorShard(row.fact_id)),
      vectorBytes(vector.values),
    );
  ctx
    .sql('UPDATE memory_facts SET embedder = ?, dim = ? WHERE fact_id = ?')
    .run(vector.embedder, dim, row.fact_id);
}

function factRow(
  ctx: StoreContext,
  tenant: string,
  namespace: string,
  id: string,
): MemoryRow | undefined {
  return ctx
    .sql('SELECT * FROM memory_facts WHERE tenant = ? AND namespace = ? AND id = ?')
    .get(tenant, namespace, id) as MemoryRow | undefined;
}

export function putMemory(
  ctx: StoreContext,
  input: MemoryPutInput,
): { fact: MemoryFact; created: boolean } {
  return ctx.write((changes) => {
    requireTenant(ctx, input.tenant);
    const existing = factRow(ctx, input.tenant, input.namespace, input.id);
    const now = ctx.now();
    const metadata = JSON.stringify(input.metadata);
    requireStorageQuota(
      ctx,
      changes,
      input.tenant,
      'memory_bytes',
      memoryFactBytes(input.text, metadata),
      () => (existing ? memoryFactBytes(existing.text, existing.metadata) : 0),
      input.max_bytes,
    );
    if (existing) {
      const updatedAt = Math.max(now, existing.updated_at + 1);
      // Setting text only when it changed keeps the FTS triggers from re-indexing it.
      if (existing.text !== input.text) {
        ctx
          .sql('UPDATE memory_facts SET text = ?, metadata = ?, updated_at = ? WHERE fact_id = ?')
          .run(input.text, metadata, updatedAt, existing.fact_id);
      } else {
        ctx
          .sql('UPDATE memory_facts SET metadata = ?, updated_at = ? WHERE fact_id = ?')
          .run(metadata, updatedAt, existing.fact_id);
      }
    } else {
      ctx
        .sql(
          `INSERT INTO memory_facts (tenant, namespace, id, text, metadata, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(input.tenant, input.namespace, input.id, input.text, metadata, now, now);
    }
    const row = factRow(ctx, input.tenant, input.namespace, input.id) as MemoryRow;
    writeVector(ctx, row, input.vector);
    return { fact: toMemoryFact(row), created: !existing };
  });
}

/**
 * Facts of (tenant, namespace) whose vector is not from `embedder`, counted per
 * embedder. The common case (nothing stale) is one probe of the index.
 */
export function staleMemoryCounts(
  ctx: StoreContext,
  tenant: string,
  namespace: string,
  embedder: string,
): MemoryEmbedderCount[] {
  // Three index seeks instead of one OR (which SQLite answers with a scan of the
  // namespace): this runs before every semantic search.
  const stale =
    ctx
      .sql(
        'SELECT 1 FROM memory_facts WHERE tenant = ? AND namespace = ? AND embedder IS NULL LIMIT 1',
      )
      .get(tenant, namespace) !== undefined ||
    ctx
      .sql('SELECT 1 FROM memory_facts WHERE tenant = ? AND namespace = ? AND embedder < ? LIMIT 1')
      .get(tenant, namespace, embedder) !== undefined ||
    ctx
      .sql('SELECT 1 FROM memory_facts WHERE tenant = ? AND namespace = ? AND embedder > ? LIMIT 1')
      .get(tenant, namespace, embedder) !== undefined;
  if (!stale) return [];
  return ctx
    .sql(
      `SELECT embedder, dim, COUNT(*) AS count FROM memory_facts
       WHERE tenant = ? AND namespace = ? AND embedder IS NOT ?
       GROUP BY embedder, dim ORDER BY count DESC`,
    )
    .all(tenant, namespace, embedder) as MemoryEmbedderCount[];
}

/** Every fact (all tenants) whose vector is not from `embedder`, in a stable order. */
export function listStaleMemory(
  ctx: StoreContext,
  embedder: string,
  limit: number,
  afterKey: number,
): MemoryStaleFact[] {
  const rows = ctx
    .sql(
      `SELECT fact_id, tenant, namespace, id, text, updated_at FROM memory_facts
       WHERE fact_id > ? AND embedder IS NOT ? ORDER BY fact_id LIMIT CAST(? AS INTEGER)`,
    )
    .all(afterKey, embedder, limit) as Pick<
    MemoryRow,
    'fact_id' | 'tenant' | 'namespace' | 'id' | 'text' | 'updated_at'
  >[];
  return rows.map(toStaleFact);
}

export function countStaleMemory(ctx: StoreContext, embedder: string): number {
  return (
    ctx.sql('SELECT COUNT(*) AS n FROM memory_facts WHERE embedder IS NOT ?').get(embedder) as {
      n: number;
    }
  ).n;
}

/** Stores re-embedded vectors in one transaction; a fact changed meanwhile is skipped. */
export function setMemoryVectors(
  ctx: StoreContext,
  updates: readonly MemoryVectorUpdate[],
): number {
  return ctx.write(() => {
    let written = 0;
    for (const update of updates) {
      const row = ctx.sql('SELECT * FROM memory_facts WHERE fact_id = ?').get(update.key) as
        MemoryRow | undefined;
      if (!row || row.updated_at !== update.version) continue;
      writeVector(ctx, row, update.vector);
      written++;
    }
    return written;
  });
}

/**
 * Moves the vectors of the first layout (memory_vec_<dim>, one partition per tenant,
 * namespace and embedder, before shards) into the sharded tables, once, at open. A
 * database without such a table pays one lookup in sqlite_master.
 */
export function upgradeUnshardedVectorTables(ctx: StoreContext): number {
  const tables = (
    ctx.db.prepare("SELECT name FROM sqlite_master WHERE name GLOB 'memory_vec_[0-9]*'").all() as {
      name: string;
    }[]
  )
    .map((row) => /^memory_vec_(\d+)$/.exec(row.name))
    .filter((match): match is RegExpExecArray => match !== null);
  let moved = 0;
  for (const match of tables) {
    const [legacy, digits] = match as unknown as [string, string];
    const dim = Number(digits);
    ctx.write(() => {
      const table = ensureVectorTable(ctx, dim);
      const insert = ctx.db.prepare(
        `INSERT INTO ${table} (rowid, part, embedding) VALUES (?, ?, ?)`,
      );
      const rows = ctx.db
        .prepare(
          `SELECT v.rowid AS fact_id, v.embedding AS embedding, f.tenant AS tenant,
                  f.namespace AS namespace, f.embedder AS embedder
           FROM ${legacy} v JOIN memory_facts f ON f.fact_id = v.rowid`,
        )
        .all() as {
        fact_id: number;
        embedding: Buffer;
        tenant: string;
        namespace: string;
        embedder: string;
      }[];
      for (const row of rows) {
        insert.run(
          BigInt(row.fact_id),
          vectorPartition(row.tenant, row.namespace, row.embedder, vectorShard(row.fact_id)),
          row.embedding,
        );
      }
      moved += rows.length;
      ctx.db.exec(`DROP TRIGGER IF EXISTS ${legacy}_cleanup; DROP TABLE ${legacy};`);
    });
  }
  return moved;
}
