// Storage quotas per tenant (src/store/rules/tenant-usage.ts): memory facts and
// artifacts are counted exactly in the write's transaction — a replace counts the
// difference, a delete frees its bytes, a deleted tenant's usage goes with it — and two
// writes racing on separate connections cannot both take the last free bytes.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MemoryVector, Store } from '../../src/store/store.ts';
import type { StoreFactory } from './harness.ts';
import { StoreHarness, TENANT } from './harness.ts';

const OTHER = 't2';
const VECTOR: MemoryVector = { embedder: 'e1', values: Float32Array.from([1, 0, 0]) };

function artifact(
  store: Store,
  path: string,
  bytes: number,
  maxBytes: number,
  tenant = TENANT,
): ReturnType<Store['putArtifact']> {
  return store.putArtifact(tenant, path, {
    body: new Uint8Array(bytes).fill(97),
    content_type: 'text/plain',
    metadata: {},
    max_bytes: maxBytes,
  });
}

/** A fact of `text` with metadata {} (2 bytes of JSON): it counts its UTF-8 bytes + 2. */
function fact(
  store: Store,
  id: string,
  text: string,
  maxBytes: number,
  tenant = TENANT,
): ReturnType<Store['putMemory']> {
  return store.putMemory({
    tenant,
    namespace: 'default',
    id,
    text,
    metadata: {},
    vector: VECTOR,
    max_bytes: maxBytes,
  });
}

function quotaExceeded(limit: string): (error: unknown) => boolean {
  return (error) => {
    const { code, details } = error as { code?: string; details?: { limit?: string } };
    return code === 'QUOTA_EXCEEDED' && details?.limit === limit;
  };
}

export function storageQuotaSuite(factory: StoreFactory): void {
  describe('storage quotas per tenant', () => {
    const harness = new StoreHarness(factory);

    it('artifact_bytes: exact to the byte; a replace counts the difference; a delete frees', async () => {
      const { store } = await harness.fresh();
      await store.createTenant(OTHER, {});
      await artifact(store, 'a', 600, 1000);
      await assert.rejects(artifact(store, 'b', 401, 1000), quotaExceeded('artifact_bytes'));
      await artifact(store, 'b', 400, 1000); // exactly 1000
      await assert.rejects(artifact(store, 'c', 1, 1000), quotaExceeded('artifact_bytes'));
      // Growing a replaced artifact counts only the growth; shrinking always passes.
      await assert.rejects(artifact(store, 'a', 601, 1000), quotaExceeded('artifact_bytes'));
      const shrunk = await artifact(store, 'a', 100, 1000);
      assert.equal(shrunk.created, false);
      await artifact(store, 'b', 900, 1000); // 100 + 900
      await assert.rejects(artifact(store, 'c', 1, 1000), quotaExceeded('artifact_bytes'));
      assert.equal(await store.deleteArtifact(TENANT, 'b'), true);
      await artifact(store, 'c', 900, 1000);
      // Another tenant has its own budget.
      await artifact(store, 'a', 1000, 1000, OTHER);
      // Over a lowered quota, a shrinking replace still passes; growth does not.
      await artifact(store, 'c', 800, 500);
      await assert.rejects(artifact(store, 'd', 1, 500), quotaExceeded('artifact_bytes'));
    });

    it('memory_bytes: text + metadata in UTF-8 bytes; replace and delete move the count', async () => {
      const { store } = await harness.fresh();
      // 'é' is two bytes: 24 of them + {} = 50 bytes.
      await fact(store, 'a', 'é'.repeat(24), 100);
      await fact(store, 'b', 'x'.repeat(48), 100); // 50 → exactly 100
      await assert.rejects(fact(store, 'c', 'y', 100), quotaExceeded('memory_bytes'));
      await fact(store, 'a', 'short', 100); // 7 bytes now
      await fact(store, 'c', 'y'.repeat(41), 100); // 7 + 50 + 43 = 100
      await assert.rejects(fact(store, 'd', 'z', 100), quotaExceeded('memory_bytes'));
      assert.equal(await store.deleteMemory(TENANT, 'default', 'b'), true);
      await fact(store, 'd', 'z'.repeat(48), 100);
      await assert.rejects(
        store.putMemory({
          tenant: TENANT,
          namespace: 'default',
          id: 'a',
          text: 'short',
          metadata: { note: 'x'.repeat(20) },
          vector: VECTOR,
          max_bytes: 100,
        }),
        quotaExceeded('memory_bytes'),
        'metadata counts too',
      );
    });

    it('a deleted tenant takes its usage with it: the same name starts from zero', async () => {
      const { store } = await harness.fresh();
      await store.createTenant(OTHER, {});
      await artifact(store, 'a', 1000, 1000, OTHER);
      await fact(store, 'a', 'x'.repeat(98), 100, OTHER);
      assert.equal(await store.deleteTenant(OTHER), true);
      await store.createTenant(OTHER, {});
      await artifact(store, 'a', 1000, 1000, OTHER);
      await fact(store, 'a', 'x'.repeat(98), 100, OTHER);
    });

    it('racing writes on separate connections cannot both take the last free bytes', async () => {
      const { store, clock } = await harness.fresh();
      const peer = await harness.peer(store, clock);
      const settle = async (writes: Promise<unknown>[], limit: string) => {
        const results = await Promise.allSettled(writes);
        const accepted = results.filter((result) => result.status === 'fulfilled').length;
        const refused = results.filter(
          (result) => result.status === 'rejected' && quotaExceeded(limit)(result.reason),
        ).length;
        return { accepted, refused };
      };
      const artifacts = await settle(
        Array.from({ length: 12 }, (_, index) =>
          artifact(index % 2 === 0 ? store : peer, `p${index}`, 100, 500),
        ),
        'artifact_bytes',
      );
      const facts = await settle(
        Array.from({ length: 12 }, (_, index) =>
          fact(index % 2 === 0 ? store : peer, `f${index}`, 'x'.repeat(98), 500),
        ),
        'memory_bytes',
      );
      console.log(
        `racing storage writes (limit 5 × 100 bytes): artifacts accepted=${artifacts.accepted} refused=${artifacts.refused}, facts accepted=${facts.accepted} refused=${facts.refused}`,
      );
      assert.deepEqual(artifacts, { accepted: 5, refused: 7 });
      assert.deepEqual(facts, { accepted: 5, refused: 7 });
      assert.equal((await store.listArtifacts(TENANT, '', 50)).items.length, 5);
      assert.equal((await store.listMemory(TENANT, 'default', 50)).items.length, 5);
    });
  });
}
