// Memory facts, for both backends: reading, listing and deleting a fact. Writing one
// stays per backend (sqlite/memory.ts, postgres/memory.ts): its vector is stored
// differently (sqlite-vec tables vs a real[] column), and so is searching.

import type { MemoryFact } from '../../types.ts';
import { decodeListCursor } from '../rows.ts';
import type { MemoryFactRow } from '../rules/memory.ts';
import { memoryPage, toMemoryFact } from '../rules/memory.ts';
import type { Page } from '../store.ts';
import { limitOf, raw, sql } from '../sql/query.ts';
import type { Op, Reads, Writes } from '../sql/steps.ts';

// Not the vector: a fact is read without it.
const FACT_COLUMNS = raw('fact_id, tenant, namespace, id, text, metadata, created_at, updated_at');

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
