// Where memory vectors are kept on SQLite: one sqlite-vec table per dimension
// (memory_vectors_<dim>), partitioned by (tenant, namespace, embedder, shard), so a KNN
// query can only ever see vectors of one embedder (memory-search.ts). Putting, reading
// and the reindex are shared (../repositories/memory.ts); they write a vector through
// vectorWriter, inside their write.

import type { VectorTarget, VectorWriter } from '../repositories/memory.ts';
import type { MemoryVector } from '../store.ts';
import type { StoreContext } from './context.ts';
import { checkDimension, checkVector } from '../rules/memory.ts';

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
export function writeVector(ctx: StoreContext, row: VectorTarget, vector: MemoryVector): void {
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

/** The shared writes' VectorWriter: writeVector, inside their synchronous write. */
export function vectorWriter(ctx: StoreContext): VectorWriter {
  return function* (tx, fact, vector) {
    yield* tx.call(() => writeVector(ctx, fact, vector));
  };
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
