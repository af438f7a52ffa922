// Query-adaptive rank fusion (docs/memory.md, "Fusion"). Equal-weight reciprocal rank
// fusion let a mostly wrong lexical list pull the right fact down on questions that
// share no word with their fact, and let a semantic near miss ("invoice 4417") tie
// with the exact match on keyword questions ("invoice 4471"). So each side is weighted
// by how much its evidence says for this query:
//
//   coverage c  = share of the query's lexical terms found in the best lexical hit
//   margin m    = similarity of the best semantic candidate − that of the 5th
//   w_lexical   = LEXICAL_GAIN · c²      w_semantic = min(1, m / SEMANTIC_MARGIN)
//   score(fact) = w_lexical / (K + lexical_rank) + w_semantic / (K + semantic_rank)
//
// A keyword query whose every term is in the top lexical hit (c = 1) lets the lexical
// order lead; a paraphrase whose best lexical hit shares one common word of three
// (c = 1/3) leaves the lead to the semantic side. A semantic list whose best candidate
// hardly stands out (m ≈ 0.03: the embedder knew no word of "猫のエサはどこ" and fell back
// to spelling) counts for little. K = 1 keeps the top ranks apart (with
// K = 60 rank 1 and rank 3 differ by 3 %). Ranks are from 1; a side that does not list
// a fact adds nothing; ties are broken by id. Every result keeps both ranks (null when
// absent) so a ranking can always be explained.

import type { MemoryLexicalTerms } from '../store/store.ts';
import { words } from './text.ts';

/** Each side contributes a candidate pool of this many times the requested limit. */
export const POOL_FACTOR = 4;
export const FUSION_K = 1;
export const LEXICAL_GAIN = 2;
/** The semantic side has full weight when its best candidate leads the 5th by this much. */
export const SEMANTIC_MARGIN = 0.1;
const MARGIN_RANK = 5;

export interface RankedHit {
  id: string;
}

export interface FusedHit {
  id: string;
  score: number;
  lexical_rank: number | null;
  semantic_rank: number | null;
}

export interface FusionWeights {
  lexical: number;
  semantic: number;
}

/** Share (0–1) of the query's terms that occur in `text` (words as words, phrases as substrings). */
export function termCoverage(terms: MemoryLexicalTerms, text: string): number {
  const total = terms.words.length + terms.phrases.length;
  if (total === 0) return 0;
  const textWords = new Set(words(text));
  const lower = text.toLowerCase();
  let found = 0;
  for (const word of terms.words) if (textWords.has(word)) found++;
  for (const phrase of terms.phrases) if (lower.includes(phrase)) found++;
  return found / total;
}

/**
 * The weights of one fused query: the lexical side's from the coverage of its best hit,
 * the semantic side's from the margin of its best candidate (cosine similarity before
 * any rerank) over its 5th.
 */
export function fusionWeights(
  terms: MemoryLexicalTerms,
  lexical: readonly { text: string }[],
  semantic: readonly { similarity?: number }[] = [],
): FusionWeights {
  const best = lexical[0];
  const coverage = best ? termCoverage(terms, best.text) : 0;
  const similarities = semantic.map((hit) => hit.similarity ?? 0).sort((a, b) => b - a);
  // Fewer than MARGIN_RANK candidates: nothing to compare with, full weight.
  const margin =
    similarities.length >= MARGIN_RANK
      ? (similarities[0] as number) - (similarities[MARGIN_RANK - 1] as number)
      : SEMANTIC_MARGIN;
  return {
    lexical: LEXICAL_GAIN * coverage * coverage,
    semantic: Math.min(1, margin / SEMANTIC_MARGIN),
  };
}

export function fuseRanks(
  lexical: readonly RankedHit[],
  semantic: readonly RankedHit[],
  limit: number,
  weights: FusionWeights,
): FusedHit[] {
  const byId = new Map<string, FusedHit>();
  const add = (
    list: readonly RankedHit[],
    side: 'lexical_rank' | 'semantic_rank',
    weight: number,
  ): void => {
    list.forEach((hit, index) => {
      const rank = index + 1;
      let fused = byId.get(hit.id);
      if (!fused) {
        fused = { id: hit.id, score: 0, lexical_rank: null, semantic_rank: null };
        byId.set(hit.id, fused);
      }
      // A list never holds an id twice; if it did, the first (best) rank counts.
      if (fused[side] !== null) return;
      fused[side] = rank;
      fused.score += weight / (FUSION_K + rank);
    });
  };
  add(lexical, 'lexical_rank', weights.lexical);
  add(semantic, 'semantic_rank', weights.semantic);
  return [...byId.values()]
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, limit);
}
