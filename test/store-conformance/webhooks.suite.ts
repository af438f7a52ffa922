// A tenant's signed webhooks through the Store interface (docs/channels.md): both
// backends keep the same semantics — create with a secret, a re-PUT changes only the
// URL, rotation replaces the secret, listings never carry it, tenant deletion removes
// them.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StoreFactory } from './harness.ts';
import { rejectsWith, StoreHarness, TENANT } from './harness.ts';

export function webhookSuite(factory: StoreFactory): void {
  describe('webhooks', () => {
    const harness = new StoreHarness(factory);

    it('creates, changes the URL only, rotates, lists without secrets and deletes', async () => {
      const { store } = await harness.fresh();
      const first = await store.putWebhook(TENANT, 'hook', 'https://a.example/x', 'whsec_one');
      assert.equal(first.created, true);
      assert.equal(first.webhook.url, 'https://a.example/x');
      const second = await store.putWebhook(TENANT, 'hook', 'https://b.example/y', 'whsec_two');
      assert.equal(second.created, false);
      assert.ok(second.webhook.updated_at > first.webhook.updated_at);
      const read = await store.getWebhook(TENANT, 'hook');
      assert.equal(read?.url, 'https://b.example/y');
      assert.equal(read?.secret, 'whsec_one', 'a re-PUT keeps the secret');
      assert.equal(read?.tenant, TENANT);
      const rotated = await store.rotateWebhookSecret(TENANT, 'hook', 'whsec_three');
      assert.equal(rotated?.name, 'hook');
      assert.equal((await store.getWebhook(TENANT, 'hook'))?.secret, 'whsec_three');
      assert.equal(await store.rotateWebhookSecret(TENANT, 'none', 'whsec_x'), null);
      const listed = (await store.listWebhooks(TENANT, 50)).items;
      assert.deepEqual(
        listed.map((webhook) => webhook.name),
        ['hook'],
      );
      assert.ok(!JSON.stringify(listed).includes('whsec_'));
      assert.deepEqual((await store.listWebhooks('nobody', 50)).items, []);
      assert.equal(await store.deleteWebhook(TENANT, 'hook'), true);
      assert.equal(await store.deleteWebhook(TENANT, 'hook'), false);
      assert.equal(await store.getWebhook(TENANT, 'hook'), null);
      await rejectsWith(
        store.putWebhook('nobody', 'x', 'https://a.example', 'whsec_x'),
        'TENANT_NOT_FOUND',
      );
    });

    it('deleting the tenant deletes its webhooks', async () => {
      const { store } = await harness.fresh();
      await store.putWebhook(TENANT, 'hook', 'https://a.example/x', 'whsec_one');
      await store.deleteTenant(TENANT);
      await store.createTenant(TENANT, {});
      assert.equal(await store.getWebhook(TENANT, 'hook'), null);
    });
  });
}
