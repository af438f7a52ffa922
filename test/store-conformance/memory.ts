// Memory through the Store interface only, so every backend (SQLite vec0 + FTS5,
// PostgreSQL tsvector + vectors) answers the same: scoping, replace semantics, keyset
// paging with cursors bound to tenant + namespace, quoted lexical terms, semantic
// candidates confined to one embedder, staleness counts and the reindex writes.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MemoryVector, Store } from '../../src/store/store.ts';
import type { StoreFactory } from './harness.ts';
import { rejectsWith, StoreHarness, TENANT } from './harness.ts';

function unit(values: number[], embedder = 'e1'): MemoryVector {
  const norm = Math.hypot(...values);
  return { embedder, values: Float32Array.from(values.map((value) => value / norm)) };
}

async function put(
  store: Store,
  namespace: string,
  id: string,
  text: string,
  vector: MemoryVector,
  tenant = TENANT,
): Promise<void> {
  await store.putMemory({ tenant, namespace, id, text, metadata: { id }, vector });
}

export function memorySuite(factory: StoreFactory): void {
  describe('memory', () => {
    const harness = new StoreHarness(factory);

    /** Puts fact `a` of the default namespace. */
    const putA = (store: Store, text: string, v: number, direction: number[]) =>
      store.putMemory({
        tenant: TENANT,
        namespace: 'default',
        id: 'a',
        text,
        metadata: { v },
        vector: unit(direction),
      });

    it('put creates then replaces, scoped by tenant and namespace; delete removes', async () => {
      const { store } = await harness.fresh();
      await store.createTenant('t2', {});
      const first = await putA(store, 'first text', 1, [1, 0, 0]);
      assert.equal(first.created, true);
      const second = await putA(store, 'second text', 2, [0, 1, 0]);
      assert.equal(second.created, false);
      assert.equal(second.fact.created_at, first.fact.created_at);
      assert.ok(second.fact.updated_at > first.fact.updated_at);
      assert.deepEqual((await store.getMemory(TENANT, 'default', 'a'))?.metadata, { v: 2 });
      // A replace with the same text changes only the metadata; the text the lexical
      // index holds is the latest either way.
      const third = await putA(store, 'second text', 3, [0, 1, 0]);
      assert.equal(third.created, false);
      assert.equal(third.fact.text, 'second text');
      assert.ok(third.fact.updated_at > second.fact.updated_at);
      const lexical = (word: string) =>
        store.searchMemoryLexical(TENANT, 'default', { words: [word], phrases: [] }, 5);
      assert.deepEqual(
        (await lexical('second')).map((hit) => hit.id),
        ['a'],
      );
      assert.deepEqual(await lexical('first'), []);
      assert.equal(await store.getMemory(TENANT, 'other', 'a'), null);
      assert.equal(await store.getMemory('t2', 'default', 'a'), null);
      await rejectsWith(
        store.putMemory({
          tenant: 'nobody',
          namespace: 'default',
          id: 'a',
          text: 'x',
          metadata: {},
          vector: unit([1, 0, 0]),
        }),
        'TENANT_NOT_FOUND',
      );
      assert.equal(await store.deleteMemory(TENANT, 'default', 'a'), true);
      assert.equal(await store.deleteMemory(TENANT, 'default', 'a'), false);
      assert.deepEqual(await store.searchMemorySemantic(TENANT, 'default', unit([0, 1, 0]), 5), []);
    });

    it('lists by id with a keyset cursor bound to tenant and namespace', async () => {
      const { store } = await harness.fresh();
      await store.createTenant('t2', {});
      const ids = ['d', 'a', 'c', 'e', 'b'];
      for (const id of ids) {
        await put(store, 'ns', id, `fact ${id}`, unit([1, 1, 0]));
        await put(store, 'ns2', id, `fact ${id}`, unit([1, 1, 0]));
      }
      const seen: string[] = [];
      let cursor: string | undefined;
      for (;;) {
        const page = await store.listMemory(TENANT, 'ns', 2, cursor);
        seen.push(...page.items.map((fact) => fact.id));
        if (page.next_cursor === null) break;
        cursor = page.next_cursor;
        await rejectsWith(store.listMemory(TENANT, 'ns2', 2, cursor), 'VALIDATION_FAILED');
        await rejectsWith(store.listMemory('t2', 'ns', 2, cursor), 'VALIDATION_FAILED');
      }
      assert.deepEqual(seen, ['a', 'b', 'c', 'd', 'e']);
      await rejectsWith(store.listMemory(TENANT, 'ns', 2, '!!'), 'VALIDATION_FAILED');
    });

    it('lexical candidates: quoted OR-joined terms, best first, scoped', async () => {
      const { store } = await harness.fresh();
      await store.createTenant('t2', {});
      await put(store, 'ns', 'x', 'the red bicycle in the garage', unit([1, 0, 0]));
      await put(store, 'ns', 'y', 'a red apple', unit([0, 1, 0]));
      await put(store, 'ns', 'z', 'NEAR the "station" OR the park', unit([0, 0, 1]));
      await put(store, 'ns', 'w', 'red', unit([0, 0, 1]), 't2');
      const hits = await store.searchMemoryLexical(
        TENANT,
        'ns',
        { words: ['red', 'bicycle'], phrases: [] },
        10,
      );
      assert.deepEqual(
        hits.map((hit) => hit.id),
        ['x', 'y'],
      );
      const syntax = await store.searchMemoryLexical(
        TENANT,
        'ns',
        { words: ['near', 'or', 'station'], phrases: [] },
        10,
      );
      assert.equal(syntax[0]?.id, 'z');
      assert.deepEqual(
        await store.searchMemoryLexical(TENANT, 'ns', { words: [], phrases: [] }, 10),
        [],
      );
      assert.equal(
        (await store.searchMemoryLexical(TENANT, 'ns', { words: ['red'], phrases: [] }, 1)).length,
        1,
      );
    });

    it('phrase candidates: substrings of unspaced scripts, LIKE wildcards taken literally', async () => {
      const { store } = await harness.fresh();
      await put(store, 'ns', 'tokyo', '東京タワーに行った', unit([1, 0, 0]));
      await put(store, 'ns', 'kyoto', '京都の寺', unit([0, 1, 0]));
      await put(store, 'ns', 'done', '進捗100%完了', unit([0, 0, 1]));
      const ids = async (phrases: string[]): Promise<string[]> =>
        (await store.searchMemoryLexical(TENANT, 'ns', { words: [], phrases }, 10))
          .map((hit) => hit.id)
          .sort();
      assert.deepEqual(await ids(['タワーに']), ['tokyo']);
      assert.deepEqual(await ids(['京']), ['kyoto', 'tokyo']);
      assert.deepEqual(await ids(['%']), ['done']);
      assert.deepEqual(await ids(['%完']), ['done']);
      assert.deepEqual(await ids(['_']), []);
      assert.deepEqual(await ids(['京%寺']), []);
    });

    it('semantic candidates: nearest first, only vectors of the asked embedder', async () => {
      const { store } = await harness.fresh();
      await put(store, 'ns', 'near', 'n', unit([1, 0.1, 0]));
      await put(store, 'ns', 'far', 'f', unit([0, 0, 1]));
      await put(store, 'ns', 'mid', 'm', unit([1, 1, 0]));
      await put(store, 'ns', 'other', 'o', unit([1, 0, 0], 'e2'));
      await put(store, 'ns2', 'elsewhere', 'e', unit([1, 0, 0]));
      const hits = await store.searchMemorySemantic(TENANT, 'ns', unit([1, 0, 0]), 10);
      assert.deepEqual(
        hits.map((hit) => hit.id),
        ['near', 'mid', 'far'],
      );
      // Each hit carries its cosine similarity (fusion and rerank use it).
      const cosines = [1 / Math.hypot(1, 0.1), 1 / Math.SQRT2, 0];
      hits.forEach((hit, index) => {
        assert.ok(Math.abs((hit.similarity ?? NaN) - (cosines[index] as number)) < 1e-4, hit.id);
      });
      const two = await store.searchMemorySemantic(TENANT, 'ns', unit([1, 0, 0]), 2);
      assert.deepEqual(
        two.map((hit) => hit.id),
        ['near', 'mid'],
      );
      const e2 = await store.searchMemorySemantic(TENANT, 'ns', unit([1, 0, 0], 'e2'), 10);
      assert.deepEqual(
        e2.map((hit) => hit.id),
        ['other'],
      );
    });

    it('staleness counts and reindex writes (a fact changed meanwhile is skipped)', async () => {
      const { store } = await harness.fresh();
      for (const id of ['a', 'b', 'c']) await put(store, 'ns', id, `fact ${id}`, unit([1, 0, 0]));
      assert.deepEqual(await store.staleMemoryCounts(TENANT, 'ns', 'e1'), []);
      assert.deepEqual(await store.staleMemoryCounts(TENANT, 'ns', 'e2'), [
        { embedder: 'e1', dim: 3, count: 3 },
      ]);
      assert.equal(await store.countStaleMemory('e2'), 3);
      const stale = await store.listStaleMemory('e2', 2, 0);
      assert.equal(stale.length, 2);
      const rest = await store.listStaleMemory('e2', 10, stale.at(-1)?.key ?? 0);
      assert.deepEqual([...stale, ...rest].map((fact) => fact.id).sort(), ['a', 'b', 'c']);
      // b changes after it was read: its re-embedding is skipped.
      await put(store, 'ns', 'b', 'fact b, edited', unit([0, 1, 0]));
      const written = await store.setMemoryVectors(
        [...stale, ...rest].map((fact) => ({
          key: fact.key,
          version: fact.version,
          vector: unit([0, 0, 1, 1], 'e2'),
        })),
      );
      assert.equal(written, 2);
      assert.deepEqual(await store.staleMemoryCounts(TENANT, 'ns', 'e2'), [
        { embedder: 'e1', dim: 3, count: 1 },
      ]);
      const hits = await store.searchMemorySemantic(TENANT, 'ns', unit([0, 0, 1, 1], 'e2'), 10);
      assert.deepEqual(hits.map((hit) => hit.id).sort(), ['a', 'c']);
    });
  });
}
