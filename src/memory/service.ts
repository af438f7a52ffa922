// The memory capability in one place: validation, embedding, hybrid search and
// reindexing over the Store's memory methods. The HTTP routes, the memory tools and
// `keel memory reindex` all go through it, so they share every rule.

import { createHash } from 'node:crypto';
import { KeelError } from '../errors.ts';
import type { JsonObject, MemoryFact, MemorySearchResult } from '../types.ts';
import type {
  MemoryEmbedderCount,
  MemoryHit,
  MemoryStore,
  MemoryVector,
  Page,
} from '../store/store.ts';
import type { EmbedKind, Embedder } from './embedders/embedder.ts';
import { POOL_FACTOR, fuseRanks, fusionWeights } from './fusion.ts';
import { factTextProblem, lexicalTerms, utf8Length } from './text.ts';

export const MAX_QUERY_BYTES = 4096;
export const SEARCH_MODES = ['fused', 'lexical', 'semantic'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

export interface MemoryService {
  readonly embedderId: string;
  put(
    tenant: string,
    namespace: string,
    id: string,
    text: string,
    metadata?: JsonObject,
  ): Promise<{ fact: MemoryFact; created: boolean }>;
  get(tenant: string, namespace: string, id: string): Promise<MemoryFact | null>;
  delete(tenant: string, namespace: string, id: string): Promise<boolean>;
  list(
    tenant: string,
    namespace: string,
    limit: number,
    cursor?: string,
  ): Promise<Page<MemoryFact>>;
  /** Throws EMBEDDER_MISMATCH when any fact of the namespace has another embedder's vector. */
  search(
    tenant: string,
    namespace: string,
    query: string,
    limit: number,
    mode?: SearchMode,
  ): Promise<MemorySearchResult[]>;
  reindex(options?: ReindexOptions): Promise<ReindexReport>;
  /**
   * For callers that must not wait long (HTTP requests): resolves once the embedder is
   * ready, or throws EMBEDDER_UNAVAILABLE (503, Retry-After) saying what it is preparing
   * and how far it is when that takes longer than `waitMs`. Starts the preparation.
   */
  ready(waitMs: number): Promise<void>;
}

/** What a 503 during the embedder's preparation tells the caller to wait. */
export const PREPARING_RETRY_AFTER_S = 5;

export interface ReindexOptions {
  batchSize?: number;
  /** Called after every committed batch. */
  onProgress?: (done: number, total: number) => void;
  /** Stop after this many batches (tests interrupt a reindex with it). */
  maxBatches?: number;
}

export interface ReindexReport {
  embedder: string;
  /** Facts that were stale when the run began. */
  stale: number;
  reindexed: number;
  /** Stale facts left (0 when complete). */
  remaining: number;
}

/** The default id of a fact: a hash of its text, so putting the same text is idempotent. */
export function factIdForText(text: string): string {
  return `h-${createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 24)}`;
}

function describeStale(counts: readonly MemoryEmbedderCount[]): string {
  return counts
    .map((row) =>
      row.embedder === null
        ? `${row.count} without a vector`
        : `${row.count} from "${row.embedder}" (${row.dim} dims)`,
    )
    .join(', ');
}

export function createMemoryService(deps: {
  store: MemoryStore;
  embedder: Embedder;
  /** tenant_limits.memory_bytes, checked by every put (absent: no quota). */
  maxBytesPerTenant?: number | null;
}): MemoryService {
  const { store, embedder } = deps;
  const maxBytes = deps.maxBytesPerTenant ?? null;

  async function embed(texts: string[], kind: EmbedKind): Promise<Float32Array[]> {
    try {
      return await embedder.embed(texts, kind);
    } catch (error) {
      throw new KeelError(
        'EMBEDDER_UNAVAILABLE',
        `embedder ${embedder.id} failed: ${(error as Error).message}`,
      );
    }
  }

  async function vectorFor(text: string, kind: EmbedKind): Promise<MemoryVector> {
    const [values] = await embed([text], kind);
    if (!values)
      throw new KeelError('EMBEDDER_UNAVAILABLE', `embedder ${embedder.id} returned nothing`);
    return { embedder: embedder.id, values };
  }

  /** The embedder's second look at the semantic candidates, when it has one. */
  async function reranked(query: string, hits: MemoryHit[]): Promise<MemoryHit[]> {
    if (!embedder.rerank || hits.length < 2) return hits;
    const scores = await embedder.rerank(
      query,
      hits.map((hit) => ({ text: hit.text, similarity: hit.similarity ?? 0 })),
    );
    return hits
      .map((hit, index) => ({ hit, index, score: scores[index] ?? 0 }))
      .sort((a, b) => b.score - a.score || a.index - b.index)
      .map((entry) => entry.hit);
  }

  async function assertIndexCurrent(tenant: string, namespace: string): Promise<void> {
    const stale = await store.staleMemoryCounts(tenant, namespace, embedder.id);
    if (stale.length === 0) return;
    throw new KeelError(
      'EMBEDDER_MISMATCH',
      `memory namespace "${namespace}" is indexed for another embedder (${describeStale(stale)}); the configured embedder is "${embedder.id}": run \`keel memory reindex\``,
      { namespace, embedder: embedder.id, stale },
    );
  }

  async function ready(waitMs: number): Promise<void> {
    if (!embedder.warm) return;
    const warming = embedder.warm();
    let timer: NodeJS.Timeout | undefined;
    const done = await Promise.race([
      warming.then(() => true),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), waitMs);
      }),
    ]).finally(() => clearTimeout(timer));
    if (done) return;
    // The preparation goes on without this caller; its failure is the next caller's.
    warming.catch(() => undefined);
    const preparing = embedder.preparing?.();
    const what = preparing
      ? `is ${preparing.what} (${Math.floor(preparing.progress * 100)}%, once per data dir)`
      : 'is still loading';
    throw new KeelError(
      'EMBEDDER_UNAVAILABLE',
      `memory embedder ${embedder.id} ${what}; retry in a few seconds`,
      { retry_after_s: PREPARING_RETRY_AFTER_S },
    );
  }

  return {
    embedderId: embedder.id,
    ready,

    async put(tenant, namespace, id, text, metadata = {}) {
      const problem = factTextProblem(text);
      if (problem) throw new KeelError('VALIDATION_FAILED', `text: ${problem}`, { field: 'text' });
      const vector = await vectorFor(text, 'passage');
      return store.putMemory({
        tenant,
        namespace,
        id,
        text,
        metadata,
        vector,
        max_bytes: maxBytes,
      });
    },

    get: (tenant, namespace, id) => store.getMemory(tenant, namespace, id),
    delete: (tenant, namespace, id) => store.deleteMemory(tenant, namespace, id),
    list: (tenant, namespace, limit, cursor) => store.listMemory(tenant, namespace, limit, cursor),

    async search(tenant, namespace, query, limit, mode = 'fused') {
      if (query.trim().length === 0 || utf8Length(query) > MAX_QUERY_BYTES) {
        throw new KeelError(
          'VALIDATION_FAILED',
          `q: must be 1–${MAX_QUERY_BYTES} bytes and not blank`,
          { field: 'q' },
        );
      }
      const pool = POOL_FACTOR * limit;
      let semanticSearch: Promise<MemoryHit[]> = Promise.resolve([]);
      if (mode !== 'lexical') {
        await assertIndexCurrent(tenant, namespace);
        // Started first: on SQLite the vector scan runs on the read pool's threads
        // while the lexical search below runs here.
        semanticSearch = store.searchMemorySemantic(
          tenant,
          namespace,
          await vectorFor(query, 'query'),
          pool,
        );
      }
      const terms = lexicalTerms(query);
      const lexicalSearch =
        mode === 'semantic'
          ? Promise.resolve([])
          : store.searchMemoryLexical(tenant, namespace, terms, pool);
      const [lexical, candidates] = await Promise.all([lexicalSearch, semanticSearch]);
      const semantic = await reranked(query, candidates);
      const texts = new Map<string, string>();
      for (const hit of [...lexical, ...semantic]) texts.set(hit.id, hit.text);
      // One side alone keeps its own order (weight 1); fused weights adapt to the query.
      const weights =
        mode === 'fused' ? fusionWeights(terms, lexical, candidates) : { lexical: 1, semantic: 1 };
      return fuseRanks(lexical, semantic, limit, weights).map((hit) => ({
        id: hit.id,
        text: texts.get(hit.id) ?? '',
        score: hit.score,
        lexical_rank: hit.lexical_rank,
        semantic_rank: hit.semantic_rank,
      }));
    },

    async reindex(options = {}) {
      const batchSize = options.batchSize ?? 256;
      const stale = await store.countStaleMemory(embedder.id);
      let reindexed = 0;
      let afterKey = 0;
      let batches = 0;
      for (;;) {
        if (options.maxBatches !== undefined && batches >= options.maxBatches) break;
        const facts = await store.listStaleMemory(embedder.id, batchSize, afterKey);
        if (facts.length === 0) break;
        const vectors = await embed(
          facts.map((fact) => fact.text),
          'passage',
        );
        reindexed += await store.setMemoryVectors(
          facts.map((fact, index) => ({
            key: fact.key,
            version: fact.version,
            vector: { embedder: embedder.id, values: vectors[index] as Float32Array },
          })),
        );
        afterKey = facts.at(-1)?.key ?? afterKey;
        batches++;
        options.onProgress?.(reindexed, stale);
      }
      return {
        embedder: embedder.id,
        stale,
        reindexed,
        remaining: await store.countStaleMemory(embedder.id),
      };
    },
  };
}
