// The two ranked candidate lists of a memory search (fusion happens in src/memory/).
//
// Lexical: words through the generated tsvector ('simple' config, each term parsed by
// plainto_tsquery so no query syntax gets through, OR-joined, ranked by ts_rank_cd);
// phrases of unspaced scripts (CJK …) as substrings via LIKE '%…%' (escaped), served by
// a pg_trgm GIN index when the extension exists (3+ characters), else a scan of the
// namespace.
// A fact's scores are summed across the two, like SQLite's bm25 sum.
// Semantic: exact cosine distance over the real[] vectors of one embedder — computed
// by pgvector's <=> when the extension is installed, in plain SQL otherwise.

import type { MemoryHit, MemoryLexicalTerms, MemoryVector } from '../store.ts';
import type { Sql, SqlParam } from './context.ts';

/** At most this many phrases become substring clauses (each one may be a scan). */
const MAX_PHRASES = 16;

export async function searchLexical(
  sql: Sql,
  tenant: string,
  namespace: string,
  terms: MemoryLexicalTerms,
  pool: number,
): Promise<MemoryHit[]> {
  const words = terms.words.filter((term) => term.length > 0);
  const phrases = terms.phrases.filter((term) => term.length > 0).slice(0, MAX_PHRASES);
  if ((words.length === 0 && phrases.length === 0) || pool < 1) return [];
  const params: SqlParam[] = [tenant, namespace, pool];
  const scores: string[] = [];
  const matches: string[] = [];
  if (words.length > 0) {
    const query = words
      .map((word) => {
        params.push(word);
        return `plainto_tsquery('simple', $${params.length})`;
      })
      .join(' || ');
    matches.push(`words @@ (${query})`);
    scores.push(`ts_rank_cd(words, ${query})`);
  }
  for (const phrase of phrases) {
    params.push(`%${phrase.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    const contains = `text LIKE $${params.length} ESCAPE '\\'`;
    matches.push(contains);
    scores.push(`(CASE WHEN ${contains} THEN 0.5 ELSE 0 END)`);
  }
  return sql.rows<MemoryHit>(
    `SELECT id, text FROM memory_facts
     WHERE tenant = $1 AND namespace = $2 AND (${matches.join(' OR ')})
     ORDER BY ${scores.join(' + ')} DESC, id LIMIT $3`,
    params,
  );
}

export async function searchSemantic(
  sql: Sql,
  tenant: string,
  namespace: string,
  vector: MemoryVector,
  pool: number,
  pgvector: boolean,
): Promise<MemoryHit[]> {
  const dim = vector.values.length;
  if (pool < 1 || dim === 0) return [];
  const distance = pgvector
    ? `(vector::vector(${dim}) <=> $5::real[]::vector(${dim}))`
    : `(1 - (SELECT SUM(a * b) / NULLIF(SQRT(SUM(a * a)) * SQRT(SUM(b * b)), 0)
            FROM unnest(vector, $5::real[]) AS v(a, b)))`;
  const rows = await sql.rows<{ id: string; text: string; distance: number | null }>(
    `SELECT id, text, ${distance}::float8 AS distance FROM memory_facts
     WHERE tenant = $1 AND namespace = $2 AND embedder = $3 AND dim = $4
     ORDER BY distance ASC NULLS LAST, id LIMIT $6`,
    [tenant, namespace, vector.embedder, dim, Array.from(vector.values), pool],
  );
  // Cosine distance is 1 − similarity; a zero vector has none (null → 0).
  return rows.map((row) => ({ id: row.id, text: row.text, similarity: 1 - (row.distance ?? 1) }));
}
