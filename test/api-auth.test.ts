// The 401/403/404 matrix over every tenant route, token lifecycle, tokenless mode with
// its Host guard, and the listen guard main.ts uses.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertListenAllowed, hostOfHeader } from '../src/api/auth.ts';
import { isKeelError } from '../src/errors.ts';
import type { ApiServer } from './helpers/api-server.ts';
import { seedTenant, startApiServer, storeSnapshot } from './helpers/api-server.ts';

interface RouteCase {
  method: string;
  path: (tenant: string) => string;
  body?: unknown;
  adminOnly?: boolean;
}

const RUN = '01900000-0000-7000-8000-000000000000';
const TENANT_ROUTES: RouteCase[] = [
  { method: 'GET', path: (t) => `/v1/tenants/${t}` },
  { method: 'PATCH', path: (t) => `/v1/tenants/${t}`, body: { metadata: {} }, adminOnly: true },
  { method: 'DELETE', path: (t) => `/v1/tenants/${t}`, adminOnly: true },
  { method: 'GET', path: (t) => `/v1/tenants/${t}/tokens`, adminOnly: true },
  { method: 'POST', path: (t) => `/v1/tenants/${t}/tokens`, body: { name: 'x' }, adminOnly: true },
  { method: 'DELETE', path: (t) => `/v1/tenants/${t}/tokens/${RUN}`, adminOnly: true },
  { method: 'GET', path: (t) => `/v1/tenants/${t}/agents` },
  { method: 'PUT', path: (t) => `/v1/tenants/${t}/agents/new`, body: { model: 'fixture/echo' } },
  { method: 'GET', path: (t) => `/v1/tenants/${t}/agents/assistant` },
  { method: 'DELETE', path: (t) => `/v1/tenants/${t}/agents/assistant` },
  {
    method: 'POST',
    path: (t) => `/v1/tenants/${t}/turns`,
    body: { agent: 'assistant', scope: 's', payload: { text: 'hi' } },
  },
  { method: 'GET', path: (t) => `/v1/tenants/${t}/runs` },
  { method: 'GET', path: (t) => `/v1/tenants/${t}/runs/${RUN}` },
  { method: 'GET', path: (t) => `/v1/tenants/${t}/runs/${RUN}/wait?timeout_ms=0` },
  { method: 'POST', path: (t) => `/v1/tenants/${t}/runs/${RUN}/cancel`, body: {} },
  { method: 'GET', path: (t) => `/v1/tenants/${t}/runs/${RUN}/trace` },
  { method: 'GET', path: (t) => `/v1/tenants/${t}/threads/assistant` },
  { method: 'GET', path: (t) => `/v1/tenants/${t}/threads/assistant/s` },
  { method: 'DELETE', path: (t) => `/v1/tenants/${t}/threads/assistant/s` },
  { method: 'GET', path: (t) => `/v1/tenants/${t}/deliveries` },
  { method: 'POST', path: (t) => `/v1/tenants/${t}/deliveries/claim`, body: {} },
  {
    method: 'POST',
    path: (t) => `/v1/tenants/${t}/deliveries/${RUN}/ack`,
    body: { claim_token: 'x', outcome: 'delivered' },
  },
];
const ADMIN_ROUTES: RouteCase[] = [
  { method: 'GET', path: () => '/v1/tenants', adminOnly: true },
  { method: 'POST', path: () => '/v1/tenants', body: { name: 'sneaky' }, adminOnly: true },
];

function assertError(
  response: { status: number; body: { error?: { code?: string } }; headers: Headers },
  status: number,
  code: string,
  label: string,
): void {
  assert.equal(response.status, status, `${label}: status ${JSON.stringify(response.body)}`);
  assert.equal(response.body.error?.code, code, label);
  assert.ok(response.headers.get('x-request-id'), `${label}: x-request-id`);
}

describe('auth with an admin token', () => {
  let server: ApiServer;
  let acmeToken: string;
  let otherToken: string;
  let revokedToken: string;

  before(async () => {
    server = await startApiServer();
    ({ token: acmeToken } = await seedTenant(server, 'acme'));
    ({ token: otherToken } = await seedTenant(server, 'other'));
    const revoked = await server.request('POST', '/v1/tenants/acme/tokens', {
      body: { name: 'revoked' },
    });
    revokedToken = revoked.body.token;
    const deleted = await server.request('DELETE', `/v1/tenants/acme/tokens/${revoked.body.id}`);
    assert.deepEqual(deleted.body, { deleted: true });
  });
  after(async () => server.close());

  const BAD_TOKENS: Array<[string, () => string | null]> = [
    ['no token', () => null],
    ['garbage token', () => 'not-a-token'],
    ['forged tenant token', () => `keel_${RUN}_${'A'.repeat(43)}`],
    ['revoked token', () => revokedToken],
  ];

  for (const route of [...TENANT_ROUTES, ...ADMIN_ROUTES]) {
    const label = `${route.method} ${route.path('acme')}`;
    it(`${label}: 401 without a valid token, 403 for other tenants, nothing written`, async () => {
      const before = await storeSnapshot(server.store);
      for (const [name, token] of BAD_TOKENS) {
        const response = await server.request(route.method, route.path('acme'), {
          token: token(),
          body: route.body,
        });
        assertError(response, 401, 'UNAUTHENTICATED', `${label} with ${name}`);
        assert.equal(response.headers.get('www-authenticate'), 'Bearer');
      }
      const foreign = await server.request(route.method, route.path('acme'), {
        token: otherToken,
        body: route.body,
      });
      assertError(foreign, 403, 'FORBIDDEN', `${label} with another tenant's token`);
      if (route.adminOnly) {
        const own = await server.request(route.method, route.path('acme'), {
          token: acmeToken,
          body: route.body,
        });
        assertError(own, 403, 'FORBIDDEN', `${label} with a tenant token (admin only)`);
      }
      assert.equal(await storeSnapshot(server.store), before, `${label}: store unchanged`);
    });
  }

  for (const route of TENANT_ROUTES) {
    const label = `${route.method} ${route.path('ghost')}`;
    it(`${label}: 404 TENANT_NOT_FOUND for the admin`, async () => {
      const response = await server.request(route.method, route.path('ghost'), {
        body: route.body,
      });
      assertError(response, 404, 'TENANT_NOT_FOUND', label);
    });
  }

  it('a tenant token reaches its own tenant routes', async () => {
    for (const path of ['/v1/tenants/acme', '/v1/tenants/acme/agents', '/v1/tenants/acme/runs']) {
      const response = await server.request('GET', path, { token: acmeToken });
      assert.equal(response.status, 200, path);
    }
    const turn = await server.request('POST', '/v1/tenants/acme/turns', {
      token: acmeToken,
      body: { agent: 'assistant', scope: 'own', payload: { text: 'hi' } },
    });
    assert.equal(turn.status, 202);
  });

  it("another tenant's run id is 404 through one's own path, not 403", async () => {
    const turn = await server.request('POST', '/v1/tenants/other/turns', {
      token: otherToken,
      body: { agent: 'assistant', scope: 'secret', payload: { text: 'x' } },
    });
    assert.equal(turn.status, 202);
    for (const suffix of ['', '/trace', '/wait?timeout_ms=0']) {
      const response = await server.request(
        'GET',
        `/v1/tenants/acme/runs/${turn.body.run_id}${suffix}`,
        { token: acmeToken },
      );
      assertError(response, 404, 'RUN_NOT_FOUND', suffix || 'get');
    }
    const cancel = await server.request(
      'POST',
      `/v1/tenants/acme/runs/${turn.body.run_id}/cancel`,
      { token: acmeToken, body: {} },
    );
    assertError(cancel, 404, 'RUN_NOT_FOUND', 'cancel');
    assert.equal((await server.store.getRun('other', turn.body.run_id))?.status, 'queued');
  });

  it('token listing never shows the secret or the hash', async () => {
    const response = await server.request('GET', '/v1/tenants/acme/tokens');
    assert.equal(response.status, 200);
    assert.ok(response.body.tokens.length >= 1);
    assert.ok(!response.text.includes(acmeToken));
    for (const token of response.body.tokens) {
      assert.deepEqual(Object.keys(token).sort(), ['created_at', 'id', 'name', 'tenant']);
    }
  });

  it('a deleted token stops working at once', async () => {
    const created = await server.request('POST', '/v1/tenants/acme/tokens', {
      body: { name: 'short-lived' },
    });
    assert.equal(created.status, 201);
    assert.match(created.body.token, /^keel_/);
    const ok = await server.request('GET', '/v1/tenants/acme/agents', {
      token: created.body.token,
    });
    assert.equal(ok.status, 200);
    await server.request('DELETE', `/v1/tenants/acme/tokens/${created.body.id}`);
    const after = await server.request('GET', '/v1/tenants/acme/agents', {
      token: created.body.token,
    });
    assertError(after, 401, 'UNAUTHENTICATED', 'after delete');
    const again = await server.request('DELETE', `/v1/tenants/acme/tokens/${created.body.id}`);
    assertError(again, 404, 'TOKEN_NOT_FOUND', 'second delete');
  });

  it('open routes need no token; /metrics needs the admin token', async () => {
    for (const path of ['/healthz', '/readyz', '/', '/openapi.json']) {
      const response = await server.request('GET', path, { token: null });
      assert.equal(response.status, 200, path);
    }
    assertError(
      await server.request('GET', '/metrics', { token: null }),
      401,
      'UNAUTHENTICATED',
      'metrics without token',
    );
    assertError(
      await server.request('GET', '/metrics', { token: acmeToken }),
      403,
      'FORBIDDEN',
      'metrics with tenant token',
    );
    assert.equal((await server.request('GET', '/metrics')).status, 200);
  });

  it('the wrong admin token of the same length is refused', async () => {
    const wrong = `${server.adminToken?.slice(0, -1)}x`;
    assertError(
      await server.request('GET', '/v1/tenants', { token: wrong }),
      401,
      'UNAUTHENTICATED',
      'near-miss admin token',
    );
  });
});

describe('tokenless mode (no admin token)', () => {
  let server: ApiServer;
  before(async () => {
    server = await startApiServer({ adminToken: null });
  });
  after(async () => server.close());

  it('accepts loopback Host headers without a token', async () => {
    const port = new URL(server.url).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'localhost']) {
      const response = await server.request('GET', '/v1/tenants', { headers: { host } });
      assert.equal(response.status, 200, host);
    }
    const created = await server.request('POST', '/v1/tenants', { body: { name: 'local' } });
    assert.equal(created.status, 201);
  });

  it('rejects a non-loopback Host header (DNS rebinding) and writes nothing', async () => {
    const before = await storeSnapshot(server.store);
    for (const host of ['evil.example:8080', 'evil.example', '10.0.0.1', 'localhost.evil.com']) {
      const response = await server.request('POST', '/v1/tenants', {
        headers: { host },
        body: { name: 'rebound' },
      });
      assertError(response, 403, 'HOST_NOT_ALLOWED', host);
    }
    assert.equal(await storeSnapshot(server.store), before);
  });

  it('sends no permissive CORS headers', async () => {
    const response = await server.request('GET', '/v1/tenants', {
      headers: { origin: 'http://evil.example' },
    });
    assert.equal(response.headers.get('access-control-allow-origin'), null);
    const preflight = await server.request('OPTIONS', '/v1/tenants', {
      headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(preflight.headers.get('access-control-allow-origin'), null);
    assert.equal(preflight.headers.get('access-control-allow-methods'), null);
    // No OPTIONS route: a preflight is an ordinary wrong method, which a browser fails.
    assert.equal(preflight.status, 405);
    assert.equal(preflight.headers.get('allow'), 'GET, HEAD, POST');
  });
});

describe('assertListenAllowed', () => {
  it('refuses a non-loopback listener without an admin token, naming the setting', () => {
    assert.throws(
      () => assertListenAllowed({ admin_token: null, listen: { host: '0.0.0.0', port: 8080 } }),
      (error: unknown) =>
        isKeelError(error, 'INSECURE_LISTEN') &&
        error.message.includes('KEEL_ADMIN_TOKEN') &&
        error.message.includes('auth.admin_token_env'),
    );
  });

  it('allows loopback without a token and anything with a token', () => {
    for (const host of ['127.0.0.1', '::1', 'localhost', '127.1.2.3']) {
      assertListenAllowed({ admin_token: null, listen: { host, port: 1 } });
    }
    assertListenAllowed({ admin_token: 'x'.repeat(32), listen: { host: '0.0.0.0', port: 1 } });
  });

  it('parses Host headers', () => {
    assert.equal(hostOfHeader('[::1]:8080'), '[::1]');
    assert.equal(hostOfHeader('localhost:80'), 'localhost');
    assert.equal(hostOfHeader('127.0.0.1'), '127.0.0.1');
    assert.equal(hostOfHeader('a:b:c'), null);
    assert.equal(hostOfHeader(undefined), null);
  });
});
