// The memory rules both backends share: which vectors are accepted, how a fact row
// reads, what the reindex sees of a stale fact, and the keyset page of a namespace
// (its cursor bound to tenant + namespace). Only the SQL and the vector storage differ.

import { KeelError } from '../../errors.ts';
import type { JsonObject, MemoryFact } from '../../types.ts';
import { encodeListCursor, iso, parseJson } from '../rows.ts';
import type { MemoryStaleFact, MemoryVector, Page } from '../store.ts';

/** The largest vector either backend stores, so both accept the same embedders. */
const MAX_VECTOR_DIMENSION = 4096;

/** The columns of a fact row both backends read. */
export interface MemoryFactRow {
  fact_id: number;
  tenant: string;
  namespace: string;
  id: string;
  text: string;
  metadata: string;
  created_at: number;
  updated_at: number;
}

/** VALIDATION_FAILED unless the vector is non-empty, finite and at most 4096 long. */
export function checkVector(vector: MemoryVector): void {
  const dim = vector.values.length;
  if (dim === 0 || !vector.values.every(Number.isFinite)) {
    throw new KeelError('VALIDATION_FAILED', 'a memory vector must be non-empty and finite');
  }
  checkDimension(dim);
}

export function checkDimension(dim: number): void {
  if (!Number.isInteger(dim) || dim < 1 || dim > MAX_VECTOR_DIMENSION) {
    throw new KeelError(
      'VALIDATION_FAILED',
      `vector dimension ${dim} is outside 1–${MAX_VECTOR_DIMENSION}`,
    );
  }
}

export function toMemoryFact(row: MemoryFactRow): MemoryFact {
  return {
    id: row.id,
    text: row.text,
    metadata: parseJson<JsonObject>(row.metadata),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** A fact to re-embed; its version is its updated_at (a fact changed since is skipped). */
export function toStaleFact(
  row: Pick<MemoryFactRow, 'fact_id' | 'tenant' | 'namespace' | 'id' | 'text' | 'updated_at'>,
): MemoryStaleFact {
  return {
    key: row.fact_id,
    tenant: row.tenant,
    namespace: row.namespace,
    id: row.id,
    text: row.text,
    version: row.updated_at,
  };
}

/** One page of a namespace by id (`rows` holds up to limit + 1 rows). */
export function memoryPage(
  rows: MemoryFactRow[],
  limit: number,
  tenant: string,
  namespace: string,
): Page<MemoryFact> {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    items: page.map(toMemoryFact),
    next_cursor:
      rows.length > limit && last
        ? encodeListCursor({ v: 1, tenant, namespace, after: last.id })
        : null,
  };
}
