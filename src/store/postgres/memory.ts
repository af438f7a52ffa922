// Where a memory fact's vector is kept on PostgreSQL: a real[] column on the fact row,
// beside its embedder and dimension, so it goes with the fact and a search can only
// ever compare vectors of one embedder (memory-search.ts). Putting, reading and the
// reindex are shared (../repositories/memory.ts).

import type { VectorWriter } from '../repositories/memory.ts';
import { sql } from '../sql/query.ts';

/**
 * A real[] as PostgreSQL's array text, bound as one value: what pg sends for a number[]
 * parameter, written here because the shared statements bind no arrays.
 */
export function realArray(values: Iterable<number>): string {
  return `{${Array.from(values).join(',')}}`;
}

export const writeVector: VectorWriter = function* (tx, fact, vector) {
  yield* tx.run(
    sql`UPDATE memory_facts SET embedder = ${vector.embedder}, dim = ${vector.values.length},
          vector = ${realArray(vector.values)}
        WHERE fact_id = ${fact.fact_id}`,
  );
};
