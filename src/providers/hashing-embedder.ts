// A deterministic hashing embedder (feature hashing of lower-cased word tokens, signed,
// L2-normalised). No model file, same vector for the same text on every machine: what
// the fixture-model server answers on /v1/embeddings.

import { createHash } from 'node:crypto';

export const DEFAULT_HASHING_DIMENSIONS = 256;

function tokens(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

export function hashingEmbedding(text: string, dimensions = DEFAULT_HASHING_DIMENSIONS): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const token of tokens(text)) {
    const digest = createHash('sha1').update(token).digest();
    const index = digest.readUInt32BE(0) % dimensions;
    const sign = (digest[4] ?? 0) & 1 ? -1 : 1;
    vector[index] = (vector[index] ?? 0) + sign;
  }
  const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
  return norm === 0 ? vector : vector.map((value) => value / norm);
}
