// One interface for every embedder (docs/memory.md). A vector is always stored with the
// id of the embedder that made it and its dimension, so vectors of two models are never
// compared with each other.

/** Some models embed questions and stored facts differently (e5: "query: " / "passage: "). */
export type EmbedKind = 'query' | 'passage';

export interface Embedder {
  /** Stable id recorded beside every vector, e.g. "glove-sif" or "openai:local/nomic". */
  readonly id: string;
  /** L2-normalised vectors, one per text, all of the same length. */
  embed(texts: readonly string[], kind: EmbedKind): Promise<Float32Array[]>;
  /**
   * Optional second look at the semantic candidates (best first, with their cosine
   * similarity): a score per candidate, higher is better; the semantic list is
   * re-ordered by it. Must be deterministic and cheap (it runs on every search).
   */
  rerank?(
    query: string,
    candidates: readonly { text: string; similarity: number }[],
  ): Promise<number[]>;
  /** Loads what the first call would load (a cache, a model); optional warm-up. */
  warm?(): Promise<void>;
  /**
   * While a one-time preparation runs (glove-sif building its word-vector cache): how
   * far it is, 0–1. null when ready, or when nothing slow is under way.
   */
  preparing?(): { what: string; progress: number } | null;
  /** Frees what it loaded (an ONNX session); called once at shutdown. */
  close?(): Promise<void>;
}

export function l2normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const value of vector) sum += value * value;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] = (vector[i] as number) / norm;
  return vector;
}

export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
