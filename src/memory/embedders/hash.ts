// `hash`: deterministic feature hashing of words and character 3–5-grams into a fixed
// number of signed buckets. Not semantic (it sees spelling, not meaning); it needs no
// files, is the same on every machine, and suits tests and a tiny fallback.

import { words } from '../text.ts';
import type { Embedder } from './embedder.ts';
import { l2normalize } from './embedder.ts';

export const HASH_DIMENSION = 256;

/** FNV-1a over UTF-16 code units; 32-bit, deterministic. */
function fnv1a(text: string, seed: number): number {
  let hash = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

function addFeature(vector: Float32Array, feature: string, weight: number): void {
  const hash = fnv1a(feature, 0);
  const sign = hash & 1 ? 1 : -1;
  const bucket = (hash >>> 1) % vector.length;
  vector[bucket] = (vector[bucket] as number) + sign * weight;
}

export function hashEmbed(text: string, dimension: number = HASH_DIMENSION): Float32Array {
  const vector = new Float32Array(dimension);
  for (const word of words(text)) {
    addFeature(vector, `w:${word}`, 1);
    const padded = `<${word}>`;
    for (let n = 3; n <= 5; n++) {
      for (let i = 0; i + n <= padded.length; i++) addFeature(vector, padded.slice(i, i + n), 0.5);
    }
  }
  return l2normalize(vector);
}

export function createHashEmbedder(dimension: number = HASH_DIMENSION): Embedder {
  return {
    id: dimension === HASH_DIMENSION ? 'hash' : `hash-${dimension}`,
    embed: async (texts) => texts.map((text) => hashEmbed(text, dimension)),
  };
}
