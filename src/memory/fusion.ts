// Reciprocal rank fusion exactly as docs/memory.md fixes it: score = Σ 1/(60 + rank)
// over the lexical and the semantic list (ranks from 1), ties broken by id ascending.
// Every result keeps both ranks (null when absent) so a ranking can be explained.

const RRF_K = 60;
/** Each side contributes a candidate pool of this many times the requested limit. */
export const POOL_FACTOR = 4;

export interface RankedHit {
  id: string;
}

export interface FusedHit {
  id: string;
  score: number;
  lexical_rank: number | null;
  semantic_rank: number | null;
}

export function rrfFuse(
  lexical: readonly RankedHit[],
  semantic: readonly RankedHit[],
  limit: number,
): FusedHit[] {
  const byId = new Map<string, FusedHit>();
  const add = (list: readonly RankedHit[], side: 'lexical_rank' | 'semantic_rank'): void => {
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
      fused.score += 1 / (RRF_K + rank);
    });
  };
  add(lexical, 'lexical_rank');
  add(semantic, 'semantic_rank');
  return [...byId.values()]
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, limit);
}
