// Count quotas on the lists a tenant grows by naming things (tenant_limits.mcp_servers,
// wasm_tools, secrets, webhooks): a create past the limit is QUOTA_EXCEEDED and writes
// nothing, a replace always goes ahead, another tenant is not counted, and racing
// creates on separate connections cannot both take the last place.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/store/store.ts';
import type { StoreFactory } from './harness.ts';
import { StoreHarness, TENANT } from './harness.ts';

const OTHER = 't2';

interface CountedKind {
  /** Creates or replaces `name` under a quota of `limit`. */
  put(store: Store, tenant: string, name: string, limit: number): Promise<{ created: boolean }>;
  /** The tenant's names of this kind. */
  names(store: Store, tenant: string): Promise<string[]>;
}

const KINDS: Record<string, CountedKind> = {
  mcp_servers: {
    put: (store, tenant, name, limit) =>
      store.putMcpServer(tenant, name, { spec: {}, tools: [], last_error: null }, limit),
    names: async (store, tenant) =>
      (await store.listMcpServersPage(tenant, 100)).items.map((item) => item.name),
  },
  wasm_tools: {
    put: (store, tenant, name, limit) =>
      store.putWasmTool(
        tenant,
        name,
        { manifest: { description: name }, module: new Uint8Array(8) },
        limit,
      ),
    names: async (store, tenant) =>
      (await store.listWasmToolsPage(tenant, 100)).items.map((item) => item.name),
  },
  secrets: {
    put: (store, tenant, name, limit) => store.putSecret(tenant, name, `v-${name}`, limit),
    names: async (store, tenant) =>
      (await store.listSecrets(tenant, 100)).items.map((item) => item.name),
  },
  webhooks: {
    put: (store, tenant, name, limit) =>
      store.putWebhook(tenant, name, `https://hooks.example/${name}`, `whsec_${name}`, limit),
    names: async (store, tenant) =>
      (await store.listWebhooks(tenant, 100)).items.map((item) => item.name),
  },
};

export function countQuotaSuite(factory: StoreFactory): void {
  describe('count quotas on named lists', () => {
    const harness = new StoreHarness(factory);

    for (const [kind, counted] of Object.entries(KINDS)) {
      it(`${kind}: a create past the quota is QUOTA_EXCEEDED and writes nothing; a replace is fine`, async () => {
        const { store } = await harness.fresh();
        await store.createTenant(OTHER, {});
        await counted.put(store, TENANT, 'a', 2);
        await counted.put(store, TENANT, 'b', 2);
        await assert.rejects(counted.put(store, TENANT, 'c', 2), (error: unknown) => {
          const { code, details } = error as { code?: string; details?: { limit?: string } };
          assert.equal(code, 'QUOTA_EXCEEDED');
          assert.equal(details?.limit, kind);
          return true;
        });
        assert.deepEqual(await counted.names(store, TENANT), ['a', 'b']);
        assert.equal((await counted.put(store, TENANT, 'b', 2)).created, false);
        assert.equal((await counted.put(store, OTHER, 'c', 2)).created, true);
      });

      it(`${kind}: racing creates on separate connections cannot both take the last place`, async () => {
        const { store, clock } = await harness.fresh();
        const peer = await harness.peer(store, clock);
        const attempts = Array.from({ length: 12 }, (_, index) =>
          counted.put(index % 2 === 0 ? store : peer, TENANT, `racer-${index}`, 5),
        );
        const results = await Promise.allSettled(attempts);
        const accepted = results.filter((result) => result.status === 'fulfilled').length;
        const refused = results.filter(
          (result) =>
            result.status === 'rejected' &&
            (result.reason as { code?: string }).code === 'QUOTA_EXCEEDED',
        ).length;
        console.log(`racing ${kind} creates: accepted=${accepted} refused=${refused} (limit 5)`);
        assert.equal(accepted, 5);
        assert.equal(refused, 7);
        assert.equal((await counted.names(store, TENANT)).length, 5);
      });
    }
  });
}
