// A tenant's MCP servers and secrets through the Store interface (docs/mcp.md): both
// backends keep the same semantics.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StoreFactory } from './harness.ts';
import { rejectsWith, StoreHarness, TENANT } from './harness.ts';

export function mcpSuite(factory: StoreFactory): void {
  describe('MCP servers and secrets', () => {
    const harness = new StoreHarness(factory);

    it('named lists (secrets, MCP servers, WASM tools, webhooks) page by name', async () => {
      const { store } = await harness.fresh();
      const names = ['c', 'a', 'e', 'b', 'd'];
      for (const name of names) {
        await store.putSecret(TENANT, name, `value-${name}`);
        await store.putMcpServer(TENANT, name, { spec: {}, tools: [], last_error: null });
        await store.putWasmTool(TENANT, name, {
          manifest: { description: name },
          module: new Uint8Array(64 * 1024),
        });
        await store.putWebhook(TENANT, name, `https://hooks.example/${name}`, `whsec_${name}`);
      }
      const lists: Record<
        string,
        (cursor?: string) => Promise<{ items: unknown[]; next_cursor: string | null }>
      > = {
        secrets: (cursor) => store.listSecrets(TENANT, 2, cursor),
        mcp: (cursor) => store.listMcpServersPage(TENANT, 2, cursor),
        wasm: (cursor) => store.listWasmToolsPage(TENANT, 2, cursor),
        webhooks: (cursor) => store.listWebhooks(TENANT, 2, cursor),
      };
      for (const [list, page] of Object.entries(lists)) {
        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const got = await page(cursor);
          assert.ok(got.items.length <= 2, list);
          seen.push(...got.items.map((item) => (item as { name: string }).name));
          cursor = got.next_cursor ?? undefined;
          pages += 1;
        } while (cursor !== undefined);
        assert.deepEqual(seen, ['a', 'b', 'c', 'd', 'e'], list);
        assert.equal(pages, 3, list);
      }
      const secrets = await store.listSecrets(TENANT, 10);
      assert.ok(!JSON.stringify(secrets).includes('value-'), 'no secret value in a listing');
      const tools = await store.listWasmToolsPage(TENANT, 10);
      assert.ok(!('module' in (tools.items[0] ?? {})), 'no module bytes in a listing');
      assert.equal(tools.items[0]?.module_bytes, 64 * 1024);
    });

    it('puts, replaces, lists, records rediscovery and deletes a server', async () => {
      const { store } = await harness.fresh();
      const spec = { enabled: true, transport: { type: 'stdio', server: 'everything' } };
      const first = await store.putMcpServer(TENANT, 'ev', {
        spec,
        tools: [{ name: 'echo' }],
        last_error: null,
      });
      assert.equal(first.created, true);
      assert.deepEqual(first.server.spec, spec);
      const second = await store.putMcpServer(TENANT, 'ev', {
        spec: { ...spec, enabled: false },
        tools: [],
        last_error: null,
      });
      assert.equal(second.created, false);
      assert.ok(second.server.updated_at > first.server.updated_at);
      assert.equal(
        await store.updateMcpServerDiscovery(TENANT, 'ev', { last_error: 'down' }),
        true,
      );
      const read = await store.getMcpServer(TENANT, 'ev');
      assert.equal(read?.last_error, 'down');
      assert.deepEqual(read?.tools, []);
      assert.deepEqual(
        (await store.listMcpServers(TENANT)).map((s) => s.name),
        ['ev'],
      );
      assert.deepEqual((await store.listMcpServers('nobody')).length, 0);
      assert.equal((await store.listAllMcpServers()).length, 1);
      assert.equal(await store.deleteMcpServer(TENANT, 'ev'), true);
      assert.equal(await store.getMcpServer(TENANT, 'ev'), null);
      await rejectsWith(
        store.putMcpServer('nobody', 'x', { spec, tools: [], last_error: null }),
        'TENANT_NOT_FOUND',
      );
    });

    it('secrets: values only through getSecretValue, listings carry names; per tenant', async () => {
      const { store } = await harness.fresh();
      await store.createTenant('other', {});
      assert.deepEqual(await store.putSecret(TENANT, 'token', 'v1'), { created: true });
      assert.deepEqual(await store.putSecret(TENANT, 'token', 'v2'), { created: false });
      assert.equal(await store.getSecretValue(TENANT, 'token'), 'v2');
      assert.equal(await store.getSecretValue('other', 'token'), null);
      const listed = (await store.listSecrets(TENANT, 50)).items;
      assert.deepEqual(
        listed.map((s) => s.name),
        ['token'],
      );
      assert.equal(JSON.stringify(listed).includes('v2'), false);
      assert.equal(await store.deleteSecret('other', 'token'), false);
      assert.equal(await store.deleteSecret(TENANT, 'token'), true);
      assert.equal(await store.getSecretValue(TENANT, 'token'), null);
      await store.putSecret(TENANT, 'kept', 'x');
      await store.deleteTenant(TENANT);
      assert.equal(await store.getSecretValue(TENANT, 'kept'), null);
    });
  });
}
