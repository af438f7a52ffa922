// The two ranked candidate lists of a memory search (fusion happens in src/memory/).
//
// Lexical: the word index (unicode61, bm25) for words of spaced scripts, the trigram
// index for phrases of scripts written without spaces (≥ 3 characters), and LIKE for
// shorter such phrases; a fact's bm25 values are summed across the indexes. Every term
// is quoted and the terms are OR-joined, so FTS5 syntax in a query is plain text.
// Semantic: exact cosine KNN in the vec0 partitions of (tenant, namespace, embedder):
// one KNN per shard, run in parallel on the read pool's threads (or one after another on
// the main connection without a pool), merged by distance. Every shard returns its own
// top k, so the merged top k is the exact top k of the namespace.

import type { MemoryHit, MemoryLexicalTerms, MemoryVector } from '../store.ts';
import type { StoreContext } from './context.ts';
import { VECTOR_SHARDS, vectorPartition, vectorTable, vectorTableExists } from './memory.ts';
import type { ReadStatement } from './read-pool.ts';

/** At most this many sub-trigram phrases become LIKE clauses (each one is a scan). */
const MAX_SHORT_TERMS = 8;

function quoted(terms: readonly string[]): string {
  return terms.map((term) => `"${term.replace(/"/g, '""')}"`).join(' OR ');
}

function likePattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export function searchLexical(
  ctx: StoreContext,
  tenant: string,
  namespace: string,
  terms: MemoryLexicalTerms,
  pool: number,
): MemoryHit[] {
  const parts: string[] = [];
  const params: unknown[] = [];
  const words = terms.words.filter((term) => term.length > 0);
  const phrases = terms.phrases.filter((term) => [...term].length >= 3);
  const short = terms.phrases
    .filter((term) => {
      const length = [...term].length;
      return length > 0 && length < 3;
    })
    .slice(0, MAX_SHORT_TERMS);
  if (words.length > 0) {
    parts.push(
      'SELECT rowid AS fact_id, rank AS score FROM memory_words WHERE memory_words MATCH ?',
    );
    params.push(quoted(words));
  }
  if (phrases.length > 0) {
    parts.push(
      'SELECT rowid AS fact_id, rank AS score FROM memory_trigrams WHERE memory_trigrams MATCH ?',
    );
    params.push(quoted(phrases));
  }
  if (short.length > 0) {
    parts.push(
      `SELECT fact_id, -0.000001 AS score FROM memory_facts WHERE tenant = ? AND namespace = ? AND (${short
        .map(() => "text LIKE ? ESCAPE '\\'")
        .join(' OR ')})`,
    );
    params.push(tenant, namespace, ...short.map(likePattern));
  }
  if (parts.length === 0) return [];
  const sql = `WITH hits (fact_id, score) AS (${parts.join(' UNION ALL ')})
    SELECT f.id AS id, f.text AS text, SUM(hits.score) AS score
    FROM hits JOIN memory_facts f ON f.fact_id = hits.fact_id
    WHERE f.tenant = ? AND f.namespace = ?
    GROUP BY f.fact_id ORDER BY score, f.id LIMIT ?`;
  return (ctx.sql(sql).all(...params, tenant, namespace, pool) as MemoryHit[]).map((hit) => ({
    id: hit.id,
    text: hit.text,
  }));
}

interface SemanticRow {
  id: string;
  text: string;
  distance: number;
}

export async function searchSemantic(
  ctx: StoreContext,
  tenant: string,
  namespace: string,
  vector: MemoryVector,
  pool: number,
): Promise<MemoryHit[]> {
  const dim = vector.values.length;
  if (pool < 1 || !vectorTableExists(ctx, dim)) return [];
  const sql = `WITH knn AS (
       SELECT rowid, distance FROM ${vectorTable(dim)}
       WHERE embedding MATCH ? AND k = ? AND part = ?)
     SELECT f.id AS id, f.text AS text, knn.distance AS distance
     FROM knn JOIN memory_facts f ON f.fact_id = knn.rowid`;
  const query = Buffer.from(
    vector.values.buffer,
    vector.values.byteOffset,
    vector.values.byteLength,
  );
  const statements: ReadStatement[] = Array.from({ length: VECTOR_SHARDS }, (_, shard) => ({
    sql,
    params: [query, pool, vectorPartition(tenant, namespace, vector.embedder, shard)],
  }));
  const perShard = ctx.readPool
    ? await ctx.readPool.all(statements)
    : statements.map((statement) => ctx.sql(statement.sql).all(...statement.params));
  return (perShard.flat() as SemanticRow[])
    .sort((a, b) => a.distance - b.distance || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, pool)
    .map((row) => ({ id: row.id, text: row.text }));
}
