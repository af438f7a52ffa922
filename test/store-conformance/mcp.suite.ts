// A tenant's MCP servers and secrets through the Store interface (docs/mcp.md): both
// backends keep the same semantics.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StoreFactory } from './harness.ts';
import { rejectsWith, StoreHarness, TENANT } from './harness.ts';

export function mcpSuite(factory: StoreFactory): void {
  describe('MCP servers and secrets', () => {
    const harness = new StoreHarness(factory);

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
      const listed = await store.listSecrets(TENANT);
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
