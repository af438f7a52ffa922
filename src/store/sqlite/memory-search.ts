// The two ranked candidate lists of a memory search (fusion happens in src/memory/).
//
// Lexical: the word index (unicode61, bm25) for words of spaced scripts, the trigram
// index for phrases of scripts written without spaces (≥ 3 characters), and LIKE for
// shorter such phrases; a fact's bm25 values are summed across the indexes. Every term
// is quoted and the terms are OR-joined, so FTS5 syntax in a query is plain text.
// Semantic: exact cosine KNN in the vec0 partitions of (tenant, namespace, embedder):
// the 4 shards are split into one chain per read-pool thread (one chain on the main
// connection without a pool); a chain scans its shards in turn, each bounded by the
// k-th distance found before it, and returns its top k; the chains' top k are merged
// by distance. No fact of the namespace's top k is ever cut, so the result is exact.
// The L2 distance d of unit vectors gives the cosine similarity as 1 − d²/2.

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
  // Ranked first through the covering index memory_facts_scope (row id → tenant,
  // namespace, id), so a frequent word's thousands of hits never touch the fact rows;
  // only the pool's texts are read. About half the time of one join for such queries.
  const sql = `WITH hits (fact_id, score) AS (${parts.join(' UNION ALL ')}),
    ranked AS (
      SELECT hits.fact_id AS fact_id, SUM(hits.score) AS score, scope.id AS id
      FROM hits JOIN memory_facts scope INDEXED BY memory_facts_scope
        ON scope.fact_id = hits.fact_id
      WHERE scope.tenant = ? AND scope.namespace = ?
      GROUP BY hits.fact_id ORDER BY score, scope.id LIMIT ?)
    SELECT ranked.id AS id, f.text AS text
    FROM ranked JOIN memory_facts f ON f.fact_id = ranked.fact_id
    ORDER BY ranked.score, ranked.id`;
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

function byDistance(a: SemanticRow, b: SemanticRow): number {
  return a.distance - b.distance || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * One statement that scans `shards` partitions one after another and returns their
 * top k. From the second on, the k-th distance found so far bounds the scan: the top
 * k's k-th distance can only be smaller, so every fact of the true top k still passes
 * (ties included, `<=`), and sqlite-vec's top-k selection, whose cost grows with
 * k × rows, sees only the few rows under the bound. Parameters per shard: query, k,
 * partition (and k − 1 from the second on); then k.
 */
function chainedKnnSql(table: string, shards: number): string {
  const scans: string[] = [];
  for (let index = 0; index < shards; index++) {
    const earlier = scans
      .map((_, before) => `SELECT distance FROM shard${before}`)
      .join(' UNION ALL ');
    const bound =
      index === 0
        ? ''
        : ` AND distance <= coalesce((SELECT distance FROM (${earlier}) ORDER BY distance LIMIT 1 OFFSET ?), 1e308)`;
    scans.push(
      `shard${index} AS MATERIALIZED (SELECT rowid, distance FROM ${table} WHERE embedding MATCH ? AND k = ? AND part = ?${bound})`,
    );
  }
  const union = scans.map((_, index) => `SELECT rowid, distance FROM shard${index}`);
  return `WITH ${scans.join(', ')}
    SELECT f.id AS id, f.text AS text, candidate.distance AS distance
    FROM (${union.join(' UNION ALL ')}) candidate JOIN memory_facts f ON f.fact_id = candidate.rowid
    ORDER BY candidate.distance, f.id LIMIT ?`;
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
  const query = Buffer.from(
    vector.values.buffer,
    vector.values.byteOffset,
    vector.values.byteLength,
  );
  // One chain of shards per thread (thread t takes shards t, t + threads, …); the
  // chains run at the same time and their top k are merged here.
  const threads = Math.min(ctx.readPool?.size ?? 1, VECTOR_SHARDS);
  const statements: ReadStatement[] = [];
  for (let thread = 0; thread < threads; thread++) {
    const shards: number[] = [];
    for (let shard = thread; shard < VECTOR_SHARDS; shard += threads) shards.push(shard);
    const params: unknown[] = [];
    shards.forEach((shard, index) => {
      params.push(query, pool, vectorPartition(tenant, namespace, vector.embedder, shard));
      if (index > 0) params.push(pool - 1);
    });
    params.push(pool);
    statements.push({ sql: chainedKnnSql(vectorTable(dim), shards.length), params });
  }
  const found = ctx.readPool
    ? await ctx.readPool.all(statements)
    : statements.map((statement) => ctx.sql(statement.sql).all(...statement.params));
  return (found.flat() as SemanticRow[])
    .sort(byDistance)
    .slice(0, pool)
    .map((row) => ({
      id: row.id,
      text: row.text,
      similarity: 1 - (row.distance * row.distance) / 2,
    }));
}
