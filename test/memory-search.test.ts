// Memory storage and search through the service on a real SQLite store, with the
// deterministic `hash` embedder: scoping, limits, CJK, FTS injection, keyset paging,
// cursor binding, embedder mismatch and resumable reindex, and RRF on a hand example.

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { createHashEmbedder } from '../src/memory/embedders/hash.ts';
import { fuseRanks, fusionWeights, termCoverage } from '../src/memory/fusion.ts';
import type { MemoryService } from '../src/memory/service.ts';
import { createMemoryService, factIdForText } from '../src/memory/service.ts';
import { lexicalTerms } from '../src/memory/text.ts';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import type { Store } from '../src/store/store.ts';

const dirs: string[] = [];
const stores: Store[] = [];
after(async () => {
  for (const store of stores) await store.close();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function fresh(): Promise<{ store: Store; memory: MemoryService; path: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'keel-memory-'));
  dirs.push(dir);
  const path = join(dir, 'keel.db');
  const store = await openSqliteStore({ path, durability: 'process' });
  stores.push(store);
  await store.createTenant('t1', {});
  await store.createTenant('t2', {});
  return { store, memory: createMemoryService({ store, embedder: createHashEmbedder() }), path };
}

describe('memory: query-adaptive fusion', () => {
  it('matches a hand-computed example (K = 1, ranks from 1, ties by id)', () => {
    // lexical: a, b, c (weight 2)   semantic: c, a, d (weight 1)
    // a: 2/2 + 1/3 = 1.3333…   b: 2/3 = 0.6666…   c: 2/4 + 1/2 = 1   d: 1/4
    const fused = fuseRanks(
      [{ id: 'a' }, { id: 'b' }, { id: 'c' }],
      [{ id: 'c' }, { id: 'a' }, { id: 'd' }],
      10,
      { lexical: 2, semantic: 1 },
    );
    assert.deepEqual(
      fused.map((hit) => [hit.id, hit.lexical_rank, hit.semantic_rank]),
      [
        ['a', 1, 2],
        ['c', 3, 1],
        ['b', 2, null],
        ['d', null, 3],
      ],
    );
    assert.equal(fused[0]?.score, 2 / 2 + 1 / 3);
    assert.equal(fused[1]?.score, 2 / 4 + 1 / 2);
    assert.equal(fused[3]?.score, 1 / 4);
    // A weak lexical side (weight 2 · (1/3)² = 0.22) leaves the lead to the semantic one.
    const weak = fuseRanks([{ id: 'a' }, { id: 'b' }], [{ id: 'b' }, { id: 'a' }], 2, {
      lexical: 2 / 9,
      semantic: 1,
    });
    assert.deepEqual(
      weak.map((hit) => hit.id),
      ['b', 'a'],
    );
    // Equal scores: the smaller id first; the limit cuts after sorting.
    const tied = fuseRanks([{ id: 'y' }, { id: 'x' }], [{ id: 'x' }, { id: 'y' }], 1, {
      lexical: 1,
      semantic: 1,
    });
    assert.deepEqual(
      tied.map((hit) => hit.id),
      ['x'],
    );
  });

  it('weights the lexical side by the coverage of its best hit', () => {
    const terms = lexicalTerms('invoice 4471');
    assert.equal(termCoverage(terms, 'Invoice 4471 is due'), 1);
    assert.equal(termCoverage(terms, 'Invoice 4417 is paid'), 0.5);
    assert.deepEqual(fusionWeights(terms, [{ text: 'Invoice 4471 is due' }]), {
      lexical: 2,
      semantic: 1,
    });
    assert.deepEqual(fusionWeights(terms, [{ text: 'invoice 4417' }]), {
      lexical: 0.5,
      semantic: 1,
    });
    assert.deepEqual(fusionWeights(terms, []), { lexical: 0, semantic: 1 });
    // The semantic side by the margin of its best candidate over its 5th (full at 0.1).
    const sims = (values: number[]) => values.map((similarity) => ({ similarity }));
    const clear = fusionWeights(terms, [], sims([0.7, 0.6, 0.55, 0.5, 0.45]));
    assert.equal(clear.semantic, 1);
    const flat = fusionWeights(terms, [], sims([0.31, 0.3, 0.3, 0.29, 0.29]));
    assert.ok(Math.abs(flat.semantic - 0.2) < 1e-9, String(flat.semantic));
    // Unspaced scripts: a question's trigrams, found as substrings of the fact.
    const cjk = lexicalTerms('年会在哪里');
    assert.deepEqual(cjk.phrases, ['年会在', '会在哪', '在哪里']);
    assert.equal(termCoverage(cjk, '公司的年会在上海举行。'), 1 / 3);
  });
});

describe('memory: storage and search', () => {
  it('scopes facts by tenant and namespace', async () => {
    const { memory } = await fresh();
    await memory.put('t1', 'default', 'pet', 'my dog Rex is a golden retriever');
    await memory.put('t1', 'work', 'pet', 'the office has an aquarium with goldfish');
    await memory.put('t2', 'default', 'pet', 'my cat Tom sleeps all day');
    assert.match((await memory.get('t1', 'default', 'pet'))?.text ?? '', /Rex/);
    assert.match((await memory.get('t1', 'work', 'pet'))?.text ?? '', /aquarium/);
    assert.match((await memory.get('t2', 'default', 'pet'))?.text ?? '', /Tom/);
    assert.equal(await memory.get('t2', 'work', 'pet'), null);
    const hits = await memory.search('t2', 'default', 'golden retriever dog', 10);
    assert.deepEqual(
      hits.map((hit) => hit.text),
      ['my cat Tom sleeps all day'],
    );
    assert.equal(hits[0]?.lexical_rank, null);
    const work = await memory.search('t1', 'work', 'golden retriever', 10);
    assert.ok(work.every((hit) => hit.text.includes('aquarium')));
    assert.equal(await memory.delete('t1', 'work', 'pet'), true);
    assert.equal(await memory.delete('t1', 'work', 'pet'), false);
    assert.ok(await memory.get('t1', 'default', 'pet'));
    await assert.rejects(memory.put('nobody', 'default', 'x', 'text'), {
      code: 'TENANT_NOT_FOUND',
    });
  });

  it('put creates then replaces; replacing keeps created_at and re-indexes the text', async () => {
    const { memory } = await fresh();
    const first = await memory.put('t1', 'default', 'f', 'alpha bravo', { source: 'a' });
    assert.equal(first.created, true);
    const second = await memory.put('t1', 'default', 'f', 'charlie delta');
    assert.equal(second.created, false);
    assert.equal(second.fact.created_at, first.fact.created_at);
    assert.ok(second.fact.updated_at > first.fact.updated_at);
    assert.deepEqual(second.fact.metadata, {});
    assert.deepEqual(await memory.search('t1', 'default', 'alpha', 5, 'lexical'), []);
    assert.equal((await memory.search('t1', 'default', 'charlie', 5, 'lexical'))[0]?.id, 'f');
  });

  it('limits a fact to 4096 bytes of UTF-8 and writes nothing beyond it', async () => {
    const { memory } = await fresh();
    await memory.put('t1', 'default', 'max', 'a'.repeat(4096));
    await memory.put('t1', 'default', 'max-cjk', '字'.repeat(1365)); // 4095 bytes
    await assert.rejects(memory.put('t1', 'default', 'big', '字'.repeat(1366)), {
      code: 'VALIDATION_FAILED',
      message: /text: .*4098 bytes/,
    });
    await assert.rejects(memory.put('t1', 'default', 'blank', '   '), {
      code: 'VALIDATION_FAILED',
    });
    assert.equal(await memory.get('t1', 'default', 'big'), null);
    assert.equal(await memory.get('t1', 'default', 'blank'), null);
  });

  it('finds CJK text without spaces, by 2-character and longer substrings', async () => {
    const { memory } = await fresh();
    await memory.put('t1', 'default', 'tokyo', '我喜欢东京塔的夜景');
    await memory.put('t1', 'default', 'jp', '明日は京都で会議があります');
    await memory.put('t1', 'default', 'en', 'the tower is tall');
    for (const [query, id] of [
      ['东京', 'tokyo'],
      ['东京塔', 'tokyo'],
      ['京都', 'jp'],
      ['会議があります', 'jp'],
      ['tower 东京塔', 'tokyo'],
    ] as const) {
      const hits = await memory.search('t1', 'default', query, 3, 'lexical');
      assert.ok(
        hits.some((hit) => hit.id === id),
        `${query} → ${id}: ${JSON.stringify(hits)}`,
      );
      assert.equal(hits.find((hit) => hit.id === id)?.lexical_rank !== null, true);
    }
  });

  it('FTS syntax in a query is literal: injection strings are harmless and still match', async () => {
    const { memory } = await fresh();
    await memory.put('t1', 'default', 'near', 'meet NEAR the station OR the park');
    await memory.put('t1', 'default', 'quote', 'she said "hello" (twice) - then left: ok*');
    await memory.put('t1', 'default', 'other', 'nothing to see here');
    const attacks = [
      '"',
      '""',
      '*',
      'NEAR(',
      'NEAR(meet station, 2)',
      'meet OR',
      'OR OR OR',
      '-station',
      'text:station',
      '(park',
      'park)',
      '"hello" AND "twice"',
      "'; DROP TABLE memory_facts; --",
      '^station',
      'station*',
      '{text}: park',
      '\\',
      'NOT park',
    ];
    for (const query of attacks) {
      const hits = await memory.search('t1', 'default', query, 5);
      assert.ok(Array.isArray(hits), query);
    }
    const near = await memory.search('t1', 'default', 'NEAR(station', 5, 'lexical');
    assert.equal(near[0]?.id, 'near');
    const quoted = await memory.search('t1', 'default', '"hello" (twice)', 5, 'lexical');
    assert.equal(quoted[0]?.id, 'quote');
    const colon = await memory.search('t1', 'default', 'left: ok*', 5, 'lexical');
    assert.equal(colon[0]?.id, 'quote');
    assert.ok(await memory.get('t1', 'default', 'other'));
    // Operators become words; common words ("or", "and") are dropped when others remain.
    assert.deepEqual(lexicalTerms('"zed" OR b* NEAR(c) -d:e').words, [
      'zed',
      'b',
      'near',
      'c',
      'd',
      'e',
    ]);
  });

  it('results explain themselves: ranks, score and the pool of 4 × limit per side', async () => {
    const { memory } = await fresh();
    for (let i = 0; i < 30; i++) {
      await memory.put('t1', 'default', `f${String(i).padStart(2, '0')}`, `apple number ${i}`);
    }
    const hits = await memory.search('t1', 'default', 'apple', 2);
    assert.equal(hits.length, 2);
    for (const hit of hits) {
      // Every fact holds "apple": coverage 1, lexical weight 2; semantic weight 0–1.
      const lexicalPart = hit.lexical_rank ? 2 / (1 + hit.lexical_rank) : 0;
      const semanticPart = hit.semantic_rank ? 1 / (1 + hit.semantic_rank) : 0;
      assert.ok(hit.score >= lexicalPart && hit.score <= lexicalPart + semanticPart + 1e-12);
      assert.ok((hit.lexical_rank ?? 0) <= 8 && (hit.semantic_rank ?? 0) <= 8);
    }
    await assert.rejects(memory.search('t1', 'default', '   ', 5), { code: 'VALIDATION_FAILED' });
  });

  it('keyset paging returns every fact exactly once, for any page size', async () => {
    const { memory } = await fresh();
    const ids = Array.from({ length: 37 }, (_, i) => `id-${(i * 7919) % 1000}`);
    for (const id of ids) await memory.put('t1', 'default', id, `fact ${id}`);
    await memory.put('t1', 'other', 'id-x', 'another namespace');
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 40 }), async (limit) => {
        const seen: string[] = [];
        let cursor: string | undefined;
        for (;;) {
          const page = await memory.list('t1', 'default', limit, cursor);
          assert.ok(page.items.length <= limit);
          seen.push(...page.items.map((fact) => fact.id));
          if (page.next_cursor === null) break;
          cursor = page.next_cursor;
        }
        assert.deepEqual(seen, [...ids].sort());
      }),
      { numRuns: 15 },
    );
  });

  it('a list cursor is bound to its tenant and namespace', async () => {
    const { memory } = await fresh();
    for (const id of ['a', 'b', 'c']) {
      await memory.put('t1', 'default', id, `fact ${id}`);
      await memory.put('t1', 'other', id, `fact ${id}`);
      await memory.put('t2', 'default', id, `fact ${id}`);
    }
    const page = await memory.list('t1', 'default', 1);
    assert.ok(page.next_cursor);
    const cursor = page.next_cursor;
    await assert.rejects(memory.list('t1', 'other', 1, cursor), {
      code: 'VALIDATION_FAILED',
      message: /another tenant or namespace/,
    });
    await assert.rejects(memory.list('t2', 'default', 1, cursor), { code: 'VALIDATION_FAILED' });
    await assert.rejects(memory.list('t1', 'default', 1, 'not-a-cursor'), {
      code: 'VALIDATION_FAILED',
    });
    assert.equal((await memory.list('t1', 'default', 1, cursor)).items[0]?.id, 'b');
  });

  it('the default fact id is a hash of the text', () => {
    assert.equal(factIdForText('same text'), factIdForText('same text'));
    assert.notEqual(factIdForText('same text'), factIdForText('other text'));
    assert.match(factIdForText('x'), /^h-[0-9a-f]{24}$/);
  });

  it('refuses to mix embedders, names them, and a resumable reindex fixes it', async () => {
    const { store, memory } = await fresh();
    for (let i = 0; i < 10; i++) {
      await memory.put('t1', 'default', `f${i}`, `fact number ${i} about gardens`);
    }
    await memory.put('t2', 'default', 'g', 'tenant two fact');
    const other = createMemoryService({ store, embedder: createHashEmbedder(64) });
    await assert.rejects(
      other.search('t1', 'default', 'gardens', 5),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, 'EMBEDDER_MISMATCH');
        assert.match(error.message, /10 from "hash" \(256 dims\)/);
        assert.match(error.message, /"hash-64"/);
        assert.match(error.message, /keel memory reindex/);
        return true;
      },
    );
    // Lexical-only search needs no vectors and still works.
    assert.equal((await other.search('t1', 'default', 'gardens', 3, 'lexical')).length, 3);
    // Writes with the new embedder are fine meanwhile.
    await other.put('t1', 'default', 'new', 'a new fact about gardens');

    // Interrupted after two batches of 3 …
    const first = await other.reindex({ batchSize: 3, maxBatches: 2 });
    assert.deepEqual(first, { embedder: 'hash-64', stale: 11, reindexed: 6, remaining: 5 });
    await assert.rejects(other.search('t1', 'default', 'gardens', 5), {
      code: 'EMBEDDER_MISMATCH',
    });
    // … and run again: it continues with what is still stale.
    const progress: number[] = [];
    const second = await other.reindex({
      batchSize: 3,
      onProgress: (done) => progress.push(done),
    });
    assert.deepEqual(second, { embedder: 'hash-64', stale: 5, reindexed: 5, remaining: 0 });
    assert.deepEqual(progress, [3, 5]);
    const hits = await other.search('t1', 'default', 'gardens', 3);
    assert.equal(hits.length, 3);
    assert.ok(hits.every((hit) => hit.semantic_rank !== null));
    // The old embedder now sees the namespace as stale: never mixed, either way.
    await assert.rejects(memory.search('t1', 'default', 'gardens', 5), {
      code: 'EMBEDDER_MISMATCH',
    });
  });

  it('deleting a tenant removes its facts, their index entries and vectors', async () => {
    const { store, memory } = await fresh();
    await memory.put('t2', 'default', 'a', 'tenant two remembers the blue car');
    await memory.put('t1', 'default', 'a', 'tenant one remembers the blue car');
    assert.equal(await store.deleteTenant('t2'), true);
    await store.createTenant('t2', {});
    assert.equal(await memory.get('t2', 'default', 'a'), null);
    assert.deepEqual(await memory.search('t2', 'default', 'blue car', 5), []);
    assert.equal((await memory.search('t1', 'default', 'blue car', 5)).length, 1);
  });
});
