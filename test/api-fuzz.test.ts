// A bad-input fuzzer: a few hundred random malformed bodies, paths, methods, content
// types and tokens over the routes. Every answer must be a 4xx with the error shape
// (reads may succeed), the server must stay up, and the store must be unchanged.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { ApiServer } from './helpers/api-server.ts';
import { seedTenant, startApiServer, storeSnapshot } from './helpers/api-server.ts';

const EXISTING = new Set(['demo', 'assistant', 'chat']);

/** A path segment that names nothing that exists, sometimes with broken encoding. */
const segment = fc
  .oneof(
    fc.string({ minLength: 1, maxLength: 40 }).map((text) => encodeURIComponent(text)),
    fc.constantFrom('%zz', '%E0%A4%A', '..', '.', '%00', 'A'.repeat(300), '%2F%2F', 'ü'),
    fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,20}$/),
  )
  .filter((value) => !EXISTING.has(value) && value.length > 0);

const pathArbitrary = fc.oneof(
  segment.map((s) => `/v1/tenants/${s}`),
  segment.map((s) => `/v1/tenants/demo/agents/${s}`),
  segment.map((s) => `/v1/tenants/demo/runs/${s}`),
  segment.map((s) => `/v1/tenants/demo/runs/${s}/wait?timeout_ms=${s}`),
  segment.map((s) => `/v1/tenants/demo/runs/${s}/cancel`),
  segment.map((s) => `/v1/tenants/demo/threads/${s}/${s}`),
  segment.map((s) => `/v1/tenants/demo/deliveries/${s}/ack`),
  segment.map((s) => `/v1/tenants/demo/tokens/${s}`),
  segment.map((s) => `/v1/${s}`),
  segment.map((s) => `/${s}`),
  fc.constantFrom(
    '/v1/tenants/demo/runs?limit=-1',
    '/v1/tenants/demo/runs?cursor=',
    '/v1/tenants/demo/deliveries?limit=9999',
  ),
);

/** JSON objects that can never pass a strict schema: they always carry an unknown key. */
const strictViolation = fc
  .dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 })
  .map((object) => JSON.stringify({ ...object, zz_fuzz_unknown: true }));

/** Valid-looking bodies with one field replaced by a value of the wrong type or range. */
const wrongField = fc
  .record({
    field: fc.constantFrom('agent', 'scope', 'payload', 'model', 'max_steps', 'name', 'limit'),
    value: fc.oneof(
      fc.constantFrom(null, -1, 1e12, true, [], '', 'UPPER CASE', '\u0000'),
      fc.array(fc.integer(), { minLength: 1, maxLength: 3 }),
    ),
  })
  .map(({ field, value }) =>
    JSON.stringify({
      agent: 'assistant',
      scope: 'chat',
      payload: { text: 'x' },
      model: 'fixture/echo',
      name: 'demo',
      [field]: value,
    }),
  );

const bodyArbitrary = fc.oneof(
  strictViolation,
  wrongField,
  fc.string({ maxLength: 200 }).map((text) => `{${text}`), // never valid JSON
  fc.constantFrom('{', '[1,', '"unterminated', '{"a":}', '\u0000', '[]', '42'),
  fc.string({ maxLength: 100 }).map((text) => `model = = ${JSON.stringify(text)}`),
);

const contentTypeArbitrary = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/toml',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
);
const tokenArbitrary = fc.constantFrom('admin', 'admin', 'admin', 'none', 'garbage', 'forged');

const requestArbitrary = fc.oneof(
  // Paths that name nothing that exists, any method, with or without a body.
  fc.record({
    method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'),
    path: pathArbitrary,
    body: fc.option(bodyArbitrary, { nil: undefined }),
    contentType: contentTypeArbitrary,
    token: tokenArbitrary,
  }),
  // Real write routes, always with a malformed body.
  fc.record({
    method: fc.constantFrom('POST', 'PUT', 'PATCH'),
    path: fc.constantFrom(
      '/v1/tenants',
      '/v1/tenants/demo',
      '/v1/tenants/demo/turns',
      '/v1/tenants/demo/agents/assistant',
      '/v1/tenants/demo/tokens',
      '/v1/tenants/demo/deliveries/claim',
    ),
    body: bodyArbitrary,
    contentType: contentTypeArbitrary,
    token: tokenArbitrary,
  }),
);

describe('bad-input fuzzer', () => {
  let server: ApiServer;
  before(async () => {
    server = await startApiServer();
    await seedTenant(server, 'demo');
    await server.request('POST', '/v1/tenants/demo/turns', {
      body: { agent: 'assistant', scope: 'chat', payload: { text: 'existing' } },
    });
  });
  after(async () => server.close());

  it('answers every malformed request with a 4xx error and changes nothing', async () => {
    const before = await storeSnapshot(server.store);
    const tenantsBefore = await server.store.listTenants();
    const agentsBefore = await server.store.listAgents('demo', 200);
    const tokens: Record<string, string | null> = {
      admin: server.adminToken,
      none: null,
      garbage: 'garbage',
      forged: `keel_01900000-0000-7000-8000-000000000000_${'x'.repeat(43)}`,
    };
    let requests = 0;
    await fc.assert(
      fc.asyncProperty(requestArbitrary, async (input) => {
        requests += 1;
        const response = await server.request(input.method, input.path, {
          token: tokens[input.token] ?? null,
          body: input.body,
          contentType: input.contentType,
        });
        const label = `${input.method} ${input.path} ${input.contentType} ${input.body ?? ''}`;
        assert.ok(response.status < 500, `${label} → ${response.status} ${response.text}`);
        // GET never writes, whatever body it carries; everything else here must fail.
        const readOnly = input.method === 'GET';
        if (!readOnly || response.status >= 400) {
          assert.ok(response.status >= 400, `${label} → ${response.status} ${response.text}`);
          assert.equal(typeof response.body.error?.code, 'string', label);
          assert.equal(typeof response.body.error?.message, 'string', label);
          assert.equal(response.body.error.request_id, response.headers.get('x-request-id'));
          assert.ok(!response.text.includes('    at '), `${label}: a stack leaked`);
        }
      }),
      { numRuns: 400, seed: 20_261_130 },
    );
    assert.equal(requests, 400);
    assert.equal((await server.request('GET', '/healthz')).status, 200);
    assert.equal(await storeSnapshot(server.store), before);
    assert.deepEqual(await server.store.listTenants(), tenantsBefore);
    assert.deepEqual(await server.store.listAgents('demo', 200), agentsBefore);
  });
});
