// Memory facts on PostgreSQL: putting a fact with its vector and the
// reindex reads/writes (reading, listing and deleting are shared:
// ../repositories/memory.ts). The vector is a real[] column on
// the fact row with its embedder and dimension, so it goes with the fact and a search
// can only ever compare vectors of one embedder (memory-search.ts).

import type { MemoryFact } from '../../types.ts';
import type {
  MemoryEmbedderCount,
  MemoryPutInput,
  MemoryStaleFact,
  MemoryVector,
  MemoryVectorUpdate,
} from '../store.ts';
import type { PgContext, Sql, Tx } from './context.ts';
import type { MemoryFactRow } from '../rules/memory.ts';
import { checkVector, toMemoryFact, toStaleFact } from '../rules/memory.ts';
import { requireStorageQuota, requireTenant } from './guards.ts';
import { memoryFactBytes } from '../rules/tenant-usage.ts';

type MemoryRow = MemoryFactRow;

const FACT_COLUMNS = 'fact_id, tenant, namespace, id, text, metadata, created_at, updated_at';

async function writeVector(tx: Tx, factId: number, vector: MemoryVector): Promise<void> {
  checkVector(vector);
  await tx.count(
    'UPDATE memory_facts SET embedder = $1, dim = $2, vector = $3 WHERE fact_id = $4',
    [vector.embedder, vector.values.length, Array.from(vector.values), factId],
  );
}

export async function putMemory(
  ctx: PgContext,
  input: MemoryPutInput,
): Promise<{ fact: MemoryFact; created: boolean }> {
  checkVector(input.vector);
  return ctx.write(async (tx) => {
    await requireTenant(tx, input.tenant);
    const metadata = JSON.stringify(input.metadata);
    await requireStorageQuota(
      tx,
      input.tenant,
      'memory_bytes',
      memoryFactBytes(input.text, metadata),
      async () =>
        (
          await tx.one<{ bytes: number }>(
            `SELECT octet_length(text) + octet_length(metadata) AS bytes FROM memory_facts
             WHERE tenant = $1 AND namespace = $2 AND id = $3`,
            [input.tenant, input.namespace, input.id],
          )
        )?.bytes ?? 0,
      input.max_bytes,
    );
    const inserted = await tx.one<MemoryRow>(
      `INSERT INTO memory_facts (tenant, namespace, id, text, metadata, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $6)
       ON CONFLICT (tenant, namespace, id) DO NOTHING RETURNING ${FACT_COLUMNS}`,
      [input.tenant, input.namespace, input.id, input.text, metadata, tx.now],
    );
    // Text is only set when it changed, so the generated tsvector is not recomputed.
    const row =
      inserted ??
      (await tx.one<MemoryRow>(
        `UPDATE memory_facts SET text = CASE WHEN text = $4 THEN text ELSE $4 END, metadata = $5,
           updated_at = GREATEST($6, updated_at + 1)
         WHERE tenant = $1 AND namespace = $2 AND id = $3 RETURNING ${FACT_COLUMNS}`,
        [input.tenant, input.namespace, input.id, input.text, metadata, tx.now],
      ));
    const fact = row as MemoryRow;
    await writeVector(tx, fact.fact_id, input.vector);
    return { fact: toMemoryFact(fact), created: inserted !== undefined };
  });
}

export async function staleMemoryCounts(
  sql: Sql,
  tenant: string,
  namespace: string,
  embedder: string,
): Promise<MemoryEmbedderCount[]> {
  return sql.rows<MemoryEmbedderCount>(
    `SELECT embedder, dim, COUNT(*)::int AS count FROM memory_facts
     WHERE tenant = $1 AND namespace = $2 AND embedder IS DISTINCT FROM $3
     GROUP BY embedder, dim ORDER BY count DESC`,
    [tenant, namespace, embedder],
  );
}

export async function listStaleMemory(
  sql: Sql,
  embedder: string,
  limit: number,
  afterKey: number,
): Promise<MemoryStaleFact[]> {
  const rows = await sql.rows<MemoryRow>(
    `SELECT fact_id, tenant, namespace, id, text, updated_at FROM memory_facts
     WHERE fact_id > $1 AND embedder IS DISTINCT FROM $2 ORDER BY fact_id LIMIT $3`,
    [afterKey, embedder, limit],
  );
  return rows.map(toStaleFact);
}

export async function countStaleMemory(sql: Sql, embedder: string): Promise<number> {
  const row = await sql.one<{ n: number }>(
    'SELECT COUNT(*)::int AS n FROM memory_facts WHERE embedder IS DISTINCT FROM $1',
    [embedder],
  );
  return row?.n ?? 0;
}

export async function setMemoryVectors(
  ctx: PgContext,
  updates: readonly MemoryVectorUpdate[],
): Promise<number> {
  for (const update of updates) checkVector(update.vector);
  return ctx.write(async (tx) => {
    let written = 0;
    for (const update of updates) {
      written += await tx.count(
        `UPDATE memory_facts SET embedder = $1, dim = $2, vector = $3
         WHERE fact_id = $4 AND updated_at = $5`,
        [
          update.vector.embedder,
          update.vector.values.length,
          Array.from(update.vector.values),
          update.key,
          update.version,
        ],
      );
    }
    return written;
  });
}
