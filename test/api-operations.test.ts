// Operations and cross-cutting behaviour: health, readiness, metrics, OpenAPI, the
// console shell, request ids, the error shape for internal failures, and the logs.

import assert from 'node:assert/strict';
import { get } from 'node:http';
import { Writable } from 'node:stream';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import type { ApiServer } from './helpers/api-server.ts';
import { seedTenant, startApiServer } from './helpers/api-server.ts';

/** GET with Accept-Encoding `encoding`: the status, Content-Encoding and raw body bytes. */
function getEncoded(
  url: string,
  encoding: string,
): Promise<{ status: number; contentEncoding: string | undefined; body: Buffer }> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { 'accept-encoding': encoding } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          contentEncoding: response.headers['content-encoding'],
          body: Buffer.concat(chunks),
        }),
      );
    }).on('error', reject);
  });
}

describe('operations', () => {
  let server: ApiServer;
  const logLines: string[] = [];
  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    server = await startApiServer({ logger: pino({ level: 'info' }, sink) });
    await seedTenant(server, 'demo');
  });
  after(async () => server.close());

  it('healthz, readyz and the console shell', async () => {
    assert.deepEqual((await server.request('GET', '/healthz', { token: null })).body, { ok: true });
    const ready = await server.request('GET', '/readyz', { token: null });
    assert.equal(ready.status, 200);
    assert.equal(ready.body.ok, true);
    const shell = await server.request('GET', '/', { token: null });
    assert.match(shell.headers.get('content-type') ?? '', /text\/html/);
    assert.match(shell.text, /<script type="module" src="\/console\/app\.js"><\/script>/);
    assert.match(shell.headers.get('content-security-policy') ?? '', /script-src 'self'/);
    const app = await server.request('GET', '/console/app.js', { token: null });
    assert.match(app.headers.get('content-type') ?? '', /text\/javascript/);
    const missing = await server.request('GET', '/console/%2e%2e/%2e%2e/package.json', {
      token: null,
    });
    assert.equal(missing.status, 404);
  });

  it('console files: brotli and gzip bodies (made on first request, then reused) decode to the file', async () => {
    const url = `${server.url}/console/vendor/preact.mjs`;
    const plain = await getEncoded(url, 'identity');
    assert.equal(plain.status, 200);
    assert.equal(plain.contentEncoding, undefined);
    assert.ok(plain.body.length > 1000);
    for (const [encoding, decode] of [
      ['br', brotliDecompressSync],
      ['gzip', gunzipSync],
    ] as const) {
      const first = await getEncoded(url, encoding);
      const again = await getEncoded(url, encoding);
      assert.equal(first.contentEncoding, encoding);
      assert.ok(first.body.length < plain.body.length / 2, `${encoding} compresses`);
      assert.deepEqual(decode(first.body), plain.body);
      assert.deepEqual(again.body, first.body);
    }
  });

  it('readyz answers 503 STORE_UNAVAILABLE with Retry-After when the store is down', async () => {
    const store = server.store;
    const ping = store.ping.bind(store);
    store.ping = async () => {
      throw new Error('disk on fire');
    };
    try {
      const response = await server.request('GET', '/readyz', { token: null });
      assert.equal(response.status, 503);
      assert.equal(response.body.error.code, 'STORE_UNAVAILABLE');
      assert.ok(response.headers.get('retry-after'));
      assert.ok(!response.text.includes('disk on fire'));
    } finally {
      store.ping = ping;
    }
  });

  it('an unexpected error is a generic 500 with only a request id, logged in full', async () => {
    const store = server.store;
    const listAgents = store.listAgents.bind(store);
    store.listAgents = async () => {
      throw new Error('SQLITE_CORRUPT: secret internals at /var/lib/keel');
    };
    try {
      const response = await server.request('GET', '/v1/tenants/demo/agents');
      assert.equal(response.status, 500);
      const requestId = response.headers.get('x-request-id');
      assert.deepEqual(response.body, {
        error: { code: 'INTERNAL', message: 'internal error', request_id: requestId },
      });
      assert.ok(!response.text.includes('SQLITE'));
      assert.ok(!response.text.includes('at '));
      const logged = logLines.find(
        (line) => line.includes('SQLITE_CORRUPT') && line.includes(requestId ?? '?'),
      );
      assert.ok(logged, 'the real error is logged with the request id');
    } finally {
      store.listAgents = listAgents;
    }
  });

  it('every log line of a request carries its id, never the Authorization header', async () => {
    const response = await server.request('GET', '/v1/tenants/demo/agents', {
      headers: { 'x-request-id': 'trace-me-123' },
    });
    assert.equal(response.headers.get('x-request-id'), 'trace-me-123');
    const lines = logLines.filter((line) => line.includes('trace-me-123'));
    // One line per request at info (method, path, status, duration), not two.
    assert.equal(lines.length, 1, 'one log line per request');
    for (const line of lines) assert.equal(JSON.parse(line).request_id, 'trace-me-123');
    assert.ok(!logLines.some((line) => line.includes(server.adminToken ?? '?')));
  });

  it('a known path asked with another method: 405 with Allow, nothing changed', async () => {
    const before = (await server.request('GET', '/v1/tenants')).body;
    const wrong = await server.request('DELETE', '/v1/tenants');
    assert.equal(wrong.status, 405);
    assert.equal(wrong.body.error.code, 'METHOD_NOT_ALLOWED');
    assert.equal(wrong.headers.get('allow'), 'GET, HEAD, POST');
    assert.match(wrong.body.error.message, /DELETE is not allowed on this path; allowed: GET/);
    assert.deepEqual((await server.request('GET', '/v1/tenants')).body, before);
    // Parameters and the artifact wildcard match too; the query string does not count.
    const run = await server.request('PUT', '/v1/tenants/demo/runs/some-id?x=1', { body: {} });
    assert.equal(run.status, 405);
    assert.equal(run.headers.get('allow'), 'GET, HEAD');
    const artifact = await server.request('POST', '/v1/tenants/demo/artifacts/a/b.txt');
    assert.equal(artifact.status, 405);
    assert.match(artifact.headers.get('allow') ?? '', /DELETE, GET, HEAD, PUT/);
    // A path no route has stays 404.
    const nowhere = await server.request('DELETE', '/v1/tenants/demo/nowhere');
    assert.equal(nowhere.status, 404);
    assert.equal(nowhere.body.error.code, 'ROUTE_NOT_FOUND');
    assert.equal(nowhere.headers.get('allow'), null);
  });

  it('x-request-id on every response; unsafe incoming ids are replaced', async () => {
    const responses = [
      await server.request('GET', '/healthz'),
      await server.request('GET', '/nowhere'),
      await server.request('GET', '/v1/tenants', { token: null }),
      await server.request('GET', '/v1/tenants/demo/runs/%E0%A4%A'),
      await server.request('POST', '/v1/tenants/demo/turns', { body: '{' }),
    ];
    for (const response of responses) {
      const id = response.headers.get('x-request-id');
      assert.ok(id, `${response.status} has x-request-id`);
      if (response.status >= 400) {
        assert.equal(response.body.error.request_id, id);
        assert.deepEqual(Object.keys(response.body.error).sort(), [
          'code',
          'message',
          'request_id',
        ]);
      }
    }
    assert.equal(responses[1]?.body.error.code, 'ROUTE_NOT_FOUND');
    assert.equal(responses[3]?.status, 400);
    const unsafe = await server.request('GET', '/healthz', {
      headers: { 'x-request-id': 'has spaces and "quotes"' },
    });
    assert.match(unsafe.headers.get('x-request-id') ?? '', /^req-/);
    // Minted ids: `req-` and a random UUID, a new one per request.
    const minted = await Promise.all(
      [1, 2, 3].map(async () =>
        (await server.request('GET', '/healthz')).headers.get('x-request-id'),
      ),
    );
    for (const id of minted)
      assert.match(id ?? '', /^req-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.equal(new Set(minted).size, 3);
  });

  it('/metrics serves keel_ metrics with route patterns, refreshed from the store', async () => {
    await server.request('POST', '/v1/tenants/demo/turns', {
      body: { agent: 'assistant', scope: 'metrics', payload: { text: 'x' } },
    });
    const response = await server.request('GET', '/metrics');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /text\/plain/);
    assert.match(response.text, /keel_queue_depth 1/);
    assert.match(response.text, /keel_runs\{status="queued"\} 1/);
    assert.match(response.text, /keel_deliveries\{status="pending"\} 0/);
    assert.match(
      response.text,
      /keel_http_requests_total\{method="POST",route="\/v1\/tenants\/:tenant\/turns",status="202"\} 1/,
    );
    assert.ok(!response.text.includes('route="/v1/tenants/demo'), 'raw URLs are not labels');
  });

  it('/openapi.json describes the routes with their request schemas', async () => {
    const response = await server.request('GET', '/openapi.json', { token: null });
    assert.equal(response.status, 200);
    const doc = response.body;
    assert.match(doc.openapi, /^3\./);
    const turns = doc.paths['/v1/tenants/{tenant}/turns'].post;
    const schema = turns.requestBody.content['application/json'].schema;
    assert.deepEqual(schema.required.sort(), ['agent', 'payload', 'scope']);
    assert.equal(schema.additionalProperties, false);
    assert.ok(
      schema.properties.delivery && schema.properties.on_busy && schema.properties.request_id,
    );
    const agent = doc.paths['/v1/tenants/{tenant}/agents/{agent}'].put;
    const agentSchema = agent.requestBody.content['application/json'].schema;
    assert.equal(agentSchema.properties.max_steps.default, 12);
    assert.equal(agentSchema.properties.max_steps.maximum, 200);
    for (const path of [
      '/v1/tenants/{tenant}/runs',
      '/v1/tenants/{tenant}/runs/{id}/wait',
      '/v1/tenants/{tenant}/runs/{id}/cancel',
      '/v1/tenants/{tenant}/deliveries/claim',
    ]) {
      assert.ok(doc.paths[path], path);
    }
    const wait = doc.paths['/v1/tenants/{tenant}/runs/{id}/wait'].get;
    assert.ok(
      wait.parameters.some((parameter: { name: string }) => parameter.name === 'timeout_ms'),
    );
  });
});
