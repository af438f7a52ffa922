// Memory facts, for both backends: putting, reading, listing and deleting a fact, and
// the reindex's reads and writes. Where a fact's vector is kept differs (SQLite: one
// sqlite-vec table per dimension; PostgreSQL: a real[] column on the fact row), so the
// writes take the backend's VectorWriter; searching stays per backend
// (sqlite/memory-search.ts, postgres/memory-search.ts).

import type { MemoryFact } from '../../types.ts';
import { decodeListCursor } from '../rows.ts';
import type { MemoryFactRow } from '../rules/memory.ts';
import { checkVector, memoryPage, toMemoryFact, toStaleFact } from '../rules/memory.ts';
import { memoryFactBytes } from '../rules/tenant-usage.ts';
import type {
  MemoryEmbedderCount,
  MemoryPutInput,
  MemoryStaleFact,
  MemoryVector,
  MemoryVectorUpdate,
  Page,
} from '../store.ts';
import { limitOf, raw, sql } from '../sql/query.ts';
import type { Query } from '../sql/query.ts';
import type { Op, Reads, Writes } from '../sql/steps.ts';
import { requireStorageQuota, requireTenant } from './guards.ts';

/** A fact as a vector write needs it: where it is, and the dimension of its vector now. */
export interface VectorTarget {
  fact_id: number;
  tenant: string;
  namespace: string;
  /** The dimension of the vector stored now; null: none. */
  dim: number | null;
}

/**
 * Stores `vector` as the fact's (replacing the one it has) and records its embedder and
 * dimension on the fact row, inside the caller's write. The vector is checked
 * (checkVector) before. Per backend: sqlite/memory.ts, postgres/memory.ts.
 */
export type VectorWriter = (tx: Writes, fact: VectorTarget, vector: MemoryVector) => Op<void>;

// Not the vector: a fact is read without it.
const FACT_COLUMNS = raw('fact_id, tenant, namespace, id, text, metadata, created_at, updated_at');

type StoredFact = MemoryFactRow & VectorTarget;

function* factBytes(tx: Writes, tenant: string, namespace: string, id: string): Op<number> {
  const old = yield* tx.one<{ text: string; metadata: string }>(
    sql`SELECT text, metadata FROM memory_facts
        WHERE tenant = ${tenant} AND namespace = ${namespace} AND id = ${id}`,
  );
  return old ? memoryFactBytes(old.text, old.metadata) : 0;
}

/**
 * Replaces an existing fact's metadata, and its text when that changed (as a statement
 * of its own: SQLite's full-text triggers re-index a fact whenever a write sets its
 * text, changed or not). Undefined: there is no such fact.
 */
function* replaceFact(
  tx: Writes,
  input: MemoryPutInput,
  metadata: string,
): Op<StoredFact | undefined> {
  const key = sql`tenant = ${input.tenant} AND namespace = ${input.namespace} AND id = ${input.id}`;
  const updatedAt = tx.dialect.greatest(sql`${tx.now}`, sql`updated_at + 1`);
  const row = yield* tx.one<StoredFact>(
    sql`UPDATE memory_facts SET metadata = ${metadata}, updated_at = ${updatedAt}
        WHERE ${key} RETURNING ${FACT_COLUMNS}, dim`,
  );
  if (!row || row.text === input.text) return row;
  return yield* tx.one<StoredFact>(
    sql`UPDATE memory_facts SET text = ${input.text} WHERE fact_id = ${row.fact_id}
        RETURNING ${FACT_COLUMNS}, dim`,
  );
}

/** Creates or replaces a fact with its vector (a replace keeps created_at, bumps updated_at). */
export function* putMemory(
  tx: Writes,
  input: MemoryPutInput,
  writeVector: VectorWriter,
): Op<{ fact: MemoryFact; created: boolean }> {
  checkVector(input.vector);
  yield* requireTenant(tx, input.tenant);
  const metadata = JSON.stringify(input.metadata);
  yield* requireStorageQuota(
    tx,
    input.tenant,
    'memory_bytes',
    memoryFactBytes(input.text, metadata),
    () => factBytes(tx, input.tenant, input.namespace, input.id),
    input.max_bytes,
  );
  // Insert first, replace on conflict: a new fact costs one statement. A fact deleted
  // between the two (PostgreSQL) is inserted on the next round.
  for (let round = 0; round < 3; round++) {
    const inserted = yield* tx.one<StoredFact>(
      sql`INSERT INTO memory_facts (tenant, namespace, id, text, metadata, created_at, updated_at)
          VALUES (${input.tenant}, ${input.namespace}, ${input.id}, ${input.text}, ${metadata},
            ${tx.now}, ${tx.now})
          ON CONFLICT (tenant, namespace, id) DO NOTHING RETURNING ${FACT_COLUMNS}, dim`,
    );
    const fact = inserted ?? (yield* replaceFact(tx, input, metadata));
    if (fact) {
      yield* writeVector(tx, fact, input.vector);
      return { fact: toMemoryFact(fact), created: inserted !== undefined };
    }
  }
  throw new Error('memory fact neither inserted nor replaced');
}

export function* getMemory(
  db: Reads,
  tenant: string,
  namespace: string,
  id: string,
): Op<MemoryFact | null> {
  const row = yield* db.one<MemoryFactRow>(
    sql`SELECT ${FACT_COLUMNS} FROM memory_facts
        WHERE tenant = ${tenant} AND namespace = ${namespace} AND id = ${id}`,
  );
  return row ? toMemoryFact(row) : null;
}

/** The full-text and vector rows go with it (SQLite: triggers; PostgreSQL: the same row). */
export function* deleteMemory(
  tx: Writes,
  tenant: string,
  namespace: string,
  id: string,
): Op<boolean> {
  const deleted = yield* tx.run(
    sql`DELETE FROM memory_facts WHERE tenant = ${tenant} AND namespace = ${namespace} AND id = ${id}`,
  );
  return deleted > 0;
}

export function* listMemory(
  db: Reads,
  tenant: string,
  namespace: string,
  limit: number,
  cursor?: string,
): Op<Page<MemoryFact>> {
  const after = cursor === undefined ? '' : decodeListCursor(cursor, tenant, namespace);
  const rows = yield* db.rows<MemoryFactRow>(
    sql`SELECT ${FACT_COLUMNS} FROM memory_facts
        WHERE tenant = ${tenant} AND namespace = ${namespace} AND id > ${after}
        ORDER BY id LIMIT ${limitOf(limit + 1)}`,
  );
  return memoryPage(rows, limit, tenant, namespace);
}

/**
 * Facts of (tenant, namespace) whose vector is not from `embedder`, counted per
 * embedder. This runs before every semantic search, and the common case is that
 * nothing is stale: one statement of three index probes (one OR of the three would be
 * a scan of the namespace on SQLite) answers it; only then are they counted.
 */
export function* staleMemoryCounts(
  db: Reads,
  tenant: string,
  namespace: string,
  embedder: string,
): Op<MemoryEmbedderCount[]> {
  const probe = (differs: Query) =>
    sql`EXISTS (SELECT 1 FROM memory_facts
          WHERE tenant = ${tenant} AND namespace = ${namespace} AND ${differs} LIMIT 1)`;
  const found = yield* db.one<{ stale: boolean | number }>(
    sql`SELECT ${probe(sql`embedder IS NULL`)} OR ${probe(sql`embedder < ${embedder}`)}
          OR ${probe(sql`embedder > ${embedder}`)} AS stale`,
  );
  if (!found?.stale) return [];
  return yield* db.rows<MemoryEmbedderCount>(
    sql`SELECT embedder, dim, COUNT(*) AS count FROM memory_facts
        WHERE tenant = ${tenant} AND namespace = ${namespace}
          AND embedder IS DISTINCT FROM ${embedder}
        GROUP BY embedder, dim ORDER BY count DESC`,
  );
}

/** Every fact (all tenants) whose vector is not from `embedder`, in a stable order. */
export function* listStaleMemory(
  db: Reads,
  embedder: string,
  limit: number,
  afterKey: number,
): Op<MemoryStaleFact[]> {
  const rows = yield* db.rows<
    Pick<MemoryFactRow, 'fact_id' | 'tenant' | 'namespace' | 'id' | 'text' | 'updated_at'>
  >(
    sql`SELECT fact_id, tenant, namespace, id, text, updated_at FROM memory_facts
        WHERE fact_id > ${afterKey} AND embedder IS DISTINCT FROM ${embedder}
        ORDER BY fact_id LIMIT ${limitOf(limit)}`,
  );
  return rows.map(toStaleFact);
}

export function* countStaleMemory(db: Reads, embedder: string): Op<number> {
  const row = yield* db.one<{ n: number }>(
    sql`SELECT COUNT(*) AS n FROM memory_facts WHERE embedder IS DISTINCT FROM ${embedder}`,
  );
  return row?.n ?? 0;
}

/** Stores re-embedded vectors in one transaction; a fact changed meanwhile is skipped. */
export function* setMemoryVectors(
  tx: Writes,
  updates: readonly MemoryVectorUpdate[],
  writeVector: VectorWriter,
): Op<number> {
  for (const update of updates) checkVector(update.vector);
  let written = 0;
  for (const update of updates) {
    const fact = yield* tx.one<VectorTarget>(
      sql`SELECT fact_id, tenant, namespace, dim FROM memory_facts
          WHERE fact_id = ${update.key} AND updated_at = ${update.version}${tx.dialect.locksRow}`,
    );
    if (!fact) continue;
    yield* writeVector(tx, fact, update.vector);
    written++;
  }
  return written;
}
