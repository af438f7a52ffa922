// Count quotas on lists a tenant grows by naming things (tenant_limits.secrets here;
// MCP servers, WebAssembly tools and webhooks share the store path, covered on both
// backends by the conformance suite): past the quota a create is 403 QUOTA_EXCEEDED
// naming the limit, and nothing is written.

import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../src/config.ts';
import type { ApiServer } from './helpers/api-server.ts';
import { seedTenant, startApiServer, storeSnapshot } from './helpers/api-server.ts';

const QUOTA = 3;

describe('secrets: a per-tenant count quota', () => {
  let server: ApiServer;
  const T = '/v1/tenants/acme';
  before(async () => {
    const defaults = loadConfig({ data_dir: tmpdir(), listen: '127.0.0.1:0' }, {}, tmpdir());
    server = await startApiServer({
      config: { tenant_limits: { ...defaults.tenant_limits, secrets: QUOTA } },
    });
    await seedTenant(server, 'acme');
    await seedTenant(server, 'other');
  });
  after(() => server.close());

  it('a secret create past tenant_limits.secrets is 403 QUOTA_EXCEEDED and writes nothing', async () => {
    for (let index = 0; index < QUOTA; index += 1) {
      const put = await server.request('PUT', `${T}/secrets/s${index}`, { body: { value: 'v' } });
      assert.equal(put.status, 201, put.text);
    }
    const before = await storeSnapshot(server.store);
    const refused = await server.request('PUT', `${T}/secrets/one-too-many`, {
      body: { value: 'v' },
    });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.error.code, 'QUOTA_EXCEEDED');
    assert.match(refused.body.error.message, /tenant_limits\.secrets/);
    assert.equal(await storeSnapshot(server.store), before);
    assert.equal(await server.store.getSecretValue('acme', 'one-too-many'), null);
    // A replace is no create; another tenant has its own quota; a delete frees a place.
    const replaced = await server.request('PUT', `${T}/secrets/s0`, { body: { value: 'w' } });
    assert.ok(replaced.status < 300, replaced.text);
    const elsewhere = await server.request('PUT', '/v1/tenants/other/secrets/s9', {
      body: { value: 'v' },
    });
    assert.equal(elsewhere.status, 201, elsewhere.text);
    assert.equal((await server.request('DELETE', `${T}/secrets/s1`)).status, 200);
    const afterDelete = await server.request('PUT', `${T}/secrets/one-too-many`, {
      body: { value: 'v' },
    });
    assert.equal(afterDelete.status, 201, afterDelete.text);
  });
});
