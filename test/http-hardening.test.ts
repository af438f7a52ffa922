// The HTTP edge against hostile clients (issue 12 items 2, 5, 7): slow headers and
// bodies are cut, refused callers lose their socket, the server holds a bounded number
// of sockets, SSE streams and waits have a per-tenant cap instead of the timeouts,
// cross-site and content-type-less state changes are refused, and deep nesting in any
// parsed input is a 400 (or a tool error) naming the field. Real sockets on loopback.

import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { connectionOwner } from '../src/api/http-limits.ts';
import { HTTP_DEFAULTS } from '../src/config.ts';
import type { HttpSettings } from '../src/config.ts';
import { prepareCall } from '../src/runtime/tool-step.ts';
import { createToolRegistry } from '../src/tools/registry.ts';
import { defineTool } from '../src/tools/tool.ts';
import type { ApiServer } from './helpers/api-server.ts';
import { seedTenant, startApiServer, storeSnapshot } from './helpers/api-server.ts';
import { AGENT_DEFAULTS } from './runtime-harness.ts';

/** A raw client socket that records what it received and when it was closed. */
interface RawClient {
  socket: Socket;
  received(): string;
  /** Resolves when the server closed (or reset) the socket; rejects after `guardMs`. */
  closed(guardMs?: number): Promise<void>;
  /** Resolves once the received text matches; rejects after 15 s without it. */
  saw(pattern: RegExp): Promise<void>;
}

/** `from`: the client's own address (Linux answers for all of 127.0.0.0/8 on loopback). */
async function rawClient(server: ApiServer, from = '127.0.0.1'): Promise<RawClient> {
  const port = Number(new URL(server.url).port);
  const socket = connect({ host: '127.0.0.1', port, localAddress: from });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let text = '';
  const waiters: (() => void)[] = [];
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
    for (const wake of waiters.splice(0)) wake();
  });
  socket.on('error', () => undefined);
  const closedPromise = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return {
    socket,
    received: () => text,
    closed(guardMs = 15_000) {
      // The guard only turns "never closed" (the bug) into a failure instead of a hang.
      let timer: NodeJS.Timeout | undefined;
      const guard = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`socket still open; got ${text}`)), guardMs);
      });
      return Promise.race([closedPromise, guard]).finally(() => clearTimeout(timer));
    },
    async saw(pattern) {
      // As in closed(): a guard against hanging, not a timing assertion.
      const deadline = Date.now() + 15_000;
      while (!pattern.test(text)) {
        if (Date.now() > deadline) throw new Error(`never saw ${pattern}; got ${text}`);
        setTimeout(() => waiters.splice(0).forEach((wake) => wake()), 1000).unref();
        await Promise.race([new Promise<void>((resolve) => waiters.push(resolve)), closedPromise]);
        if (socket.destroyed && !pattern.test(text)) throw new Error(`closed; got ${text}`);
      }
    },
  };
}

/** Writes `text` one byte per tick until the socket closes: a slowloris client. */
function trickle(client: RawClient, text: string, everyMs = 100): () => number {
  let sent = 0;
  const timer = setInterval(() => {
    if (client.socket.destroyed || !client.socket.writable) {
      clearInterval(timer);
      return;
    }
    client.socket.write(text[sent % text.length] ?? 'x');
    sent += 1;
  }, everyMs);
  client.socket.once('close', () => clearInterval(timer));
  return () => sent;
}

function httpSettings(overrides: Partial<HttpSettings>): { http: HttpSettings } {
  return { http: { ...HTTP_DEFAULTS, ...overrides } };
}

async function until(condition: () => Promise<boolean> | boolean): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setImmediate(resolve));
}

describe('slow clients and timeouts', () => {
  let server: ApiServer;
  before(async () => {
    server = await startApiServer({
      config: httpSettings({ headers_timeout_ms: 1000, request_timeout_ms: 1500 }),
    });
  });
  after(() => server.close());

  it('headers trickled byte by byte are cut with 408 at http.headers_timeout_ms', async () => {
    const client = await rawClient(server);
    client.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    const sent = trickle(client, 'a');
    await client.closed();
    console.log(`slow headers: cut after ${sent()} trickled bytes`);
    assert.match(client.received(), /^HTTP\/1\.1 408/);
    assert.match(client.received(), /"code":"REQUEST_TIMEOUT"/);
  });

  it('a body trickled after valid headers is cut with 408 at http.request_timeout_ms', async () => {
    const client = await rawClient(server);
    client.socket.write(
      `POST /v1/tenants HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.adminToken}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"name":"',
    );
    const sent = trickle(client, 'a');
    await client.closed();
    console.log(`slow body: cut after ${sent()} trickled bytes`);
    assert.match(client.received(), /^HTTP\/1\.1 408/);
    assert.match(client.received(), /"code":"REQUEST_TIMEOUT"/);
    assert.equal((await server.store.listTenants()).length, 0);
  });
});

describe('refused callers lose their socket', () => {
  let server: ApiServer;
  // Long timeouts: only the refusal may close these sockets.
  before(async () => {
    server = await startApiServer({
      config: httpSettings({ request_timeout_ms: 600_000, headers_timeout_ms: 60_000 }),
    });
  });
  after(() => server.close());

  it('a 401 is answered with connection: close and the trickling socket is closed', async () => {
    const client = await rawClient(server);
    client.socket.write(
      'POST /v1/tenants HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        'Content-Length: 1000000\r\n\r\n{',
    );
    const sent = trickle(client, ' ');
    await client.saw(/\r\n\r\n\{.*\}/s);
    assert.match(client.received(), /^HTTP\/1\.1 401/);
    assert.match(client.received(), /\r\nconnection: close\r\n/i);
    assert.match(client.received(), /"code":"UNAUTHENTICATED"/);
    await client.closed();
    console.log(`401 with a slow body: socket closed after ${sent()} trickled bytes`);
  });
});

describe('connection cap', () => {
  let server: ApiServer;
  before(async () => {
    server = await startApiServer({ config: httpSettings({ max_connections: 4 }) });
  });
  after(() => server.close());

  function openSockets(): Promise<number> {
    return new Promise((resolve, reject) =>
      server.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
    );
  }

  it('holds at most http.max_connections sockets; one more is dropped, a freed slot is reused', async () => {
    const held = await Promise.all([1, 2, 3, 4].map(() => rawClient(server)));
    await until(async () => (await openSockets()) === 4);
    const extra = await rawClient(server);
    extra.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await extra.closed();
    assert.equal(extra.received(), '', 'the extra socket got no answer');
    console.log(`connection cap 4: 5th socket dropped, ${await openSockets()} open`);
    held[0]?.socket.destroy();
    await until(async () => (await openSockets()) === 3);
    const health = await server.request('GET', '/healthz');
    assert.equal(health.status, 200);
    for (const client of held) client.socket.destroy();
  });
});

describe('per-address connection cap', () => {
  let server: ApiServer;
  before(async () => {
    server = await startApiServer({
      config: httpSettings({ max_connections: 8, max_connections_per_address: 4 }),
    });
  });
  after(() => server.close());

  function openSockets(): Promise<number> {
    return new Promise((resolve, reject) =>
      server.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
    );
  }

  it('one address (slowloris) holds at most http.max_connections_per_address; another still gets in', async () => {
    // The attacker opens as many sockets as the whole server has and trickles headers.
    const attacker: RawClient[] = [];
    for (let index = 0; index < 8; index += 1) {
      const client = await rawClient(server, '127.0.0.2');
      client.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
      trickle(client, 'a', 200);
      attacker.push(client);
    }
    // Renewing a cut socket is cut again while the others are held.
    const renewed = await rawClient(server, '127.0.0.2');
    await renewed.closed();
    assert.equal(renewed.received(), '', 'the renewed socket got no answer');

    // Another address: a whole request and its answer on a fresh socket.
    const visitor = await rawClient(server, '127.0.0.1');
    visitor.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    await visitor.closed();
    const held = attacker.filter((client) => !client.socket.destroyed).length;
    const open = await openSockets();
    console.log(
      `per-address cap 4 of 8: 127.0.0.2 opened 9, held ${held}, server holds ${open}; ` +
        `127.0.0.1 got "${visitor.received().split('\r\n')[0]}"`,
    );
    assert.match(visitor.received(), /^HTTP\/1\.1 200/);
    assert.equal(held, 4);
    assert.equal(open, 4);
    for (const client of attacker) client.socket.destroy();
  });
});

describe('SSE streams and waits: per-tenant cap, no timeout', () => {
  let server: ApiServer;
  let runId: string;
  before(async () => {
    server = await startApiServer({
      config: httpSettings({
        max_streams_per_tenant: 2,
        headers_timeout_ms: 1000,
        request_timeout_ms: 1500,
        idle_timeout_ms: 1000,
      }),
    });
    await seedTenant(server, 'demo');
    await seedTenant(server, 'other');
    // No worker in this server: the run stays queued and its streams stay open.
    const turn = await server.request('POST', '/v1/tenants/demo/turns', {
      body: { agent: 'assistant', scope: 's', payload: { text: 'hi' } },
    });
    assert.equal(turn.status, 202, turn.text);
    runId = turn.body.run_id as string;
  });
  after(() => server.close());

  async function openStream(tenant = 'demo'): Promise<RawClient> {
    const client = await rawClient(server);
    client.socket.write(
      `GET /v1/tenants/${tenant}/runs/${runId}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
        `Authorization: Bearer ${server.adminToken}\r\n\r\n`,
    );
    return client;
  }

  it('a third stream or wait of one tenant gets 429 RATE_LIMITED; streams outlive the timeouts', async () => {
    const streams = [await openStream(), await openStream()];
    for (const stream of streams) await stream.saw(/retry: 2000/);
    const third = await openStream();
    await third.saw(/\r\n\r\n\{.*\}/s);
    assert.match(third.received(), /^HTTP\/1\.1 429/);
    assert.match(third.received(), /"code":"RATE_LIMITED"/);
    assert.match(third.received(), /\r\nretry-after: \d+\r\n/i);
    const wait = await server.request('GET', `/v1/tenants/demo/runs/${runId}/wait?timeout_ms=0`);
    assert.equal(wait.status, 429, wait.text);

    // A slow body is cut meanwhile (request and idle timeouts are live, > 1 s passed) …
    const slow = await rawClient(server);
    slow.socket.write('POST /v1/tenants HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 50\r\n\r\n');
    trickle(slow, ' ');
    await slow.closed();
    // … while the quiet streams are still open.
    for (const stream of streams) assert.equal(stream.socket.destroyed, false);
    assert.ok(!streams.some((stream) => /\r\n0\r\n\r\n$/.test(stream.received())));

    streams[0]?.socket.destroy();
    await until(async () => {
      const again = await server.request('GET', `/v1/tenants/demo/runs/${runId}/wait?timeout_ms=0`);
      return again.status === 200;
    });
    for (const stream of streams) stream.socket.destroy();
    third.socket.destroy();
  });
});

describe('cross-site requests and content types (tokenless mode)', () => {
  let server: ApiServer;
  let runId: string;
  before(async () => {
    server = await startApiServer({ adminToken: null });
    await seedTenant(server, 'demo');
    const turn = await server.request('POST', '/v1/tenants/demo/turns', {
      body: { agent: 'assistant', scope: 's', payload: { text: 'hi' } },
    });
    runId = turn.body.run_id as string;
  });
  after(() => server.close());

  it('an Origin of another site or Sec-Fetch-Site: cross-site is 403; nothing written', async () => {
    const before = await storeSnapshot(server.store);
    const body = { name: 'evil' };
    const refusals: Record<string, string>[] = [
      { origin: 'http://evil.example' },
      { origin: 'null' },
      { origin: 'http://127.0.0.1:1' },
      { 'sec-fetch-site': 'cross-site' },
    ];
    for (const headers of refusals) {
      const refused = await server.request('POST', '/v1/tenants', { body, headers });
      assert.equal(refused.status, 403, JSON.stringify(headers));
      assert.equal(refused.body.error.code, 'CROSS_SITE_REQUEST');
      assert.equal(refused.headers.get('connection'), 'close');
    }
    const cancel = await server.request('POST', `/v1/tenants/demo/runs/${runId}/cancel`, {
      headers: { origin: 'https://evil.example' },
    });
    assert.equal(cancel.status, 403);
    assert.equal(await storeSnapshot(server.store), before);
    // The console itself (same origin) and GETs from anywhere still work.
    const own = await server.request('POST', '/v1/tenants', {
      body: { name: 'mine' },
      headers: { origin: server.url, 'sec-fetch-site': 'same-origin' },
    });
    assert.equal(own.status, 201, own.text);
    const read = await server.request('GET', '/v1/tenants', {
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    assert.equal(read.status, 200);
  });

  it('a state change without a JSON (or TOML) content type is 415, even without a body', async () => {
    const before = await storeSnapshot(server.store);
    const cancel = await server.request('POST', `/v1/tenants/demo/runs/${runId}/cancel`, {
      contentType: null,
    });
    assert.equal(cancel.status, 415, cancel.text);
    assert.equal(cancel.body.error.code, 'UNSUPPORTED_MEDIA_TYPE');
    assert.match(cancel.body.error.message, /application\/json/);
    // What an HTML form sends: no preflight, so it must be refused.
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded']) {
      const form = await server.request('POST', '/v1/tenants', {
        body: '{"name":"formed"}',
        contentType,
      });
      assert.equal(form.status, 415, contentType);
      assert.equal(form.headers.get('connection'), 'close');
    }
    assert.equal(await storeSnapshot(server.store), before);
    const toml = await server.request('PUT', '/v1/tenants/demo/agents/tomled', {
      body: 'model = "fixture/echo"\n',
      contentType: 'application/toml',
    });
    assert.equal(toml.status, 201, toml.text);
    const cancelled = await server.request('POST', `/v1/tenants/demo/runs/${runId}/cancel`);
    assert.equal(cancelled.status, 200, cancelled.text);
  });
});

describe('parser depth', () => {
  let server: ApiServer;
  before(async () => {
    server = await startApiServer();
    await seedTenant(server, 'demo');
  });
  after(() => server.close());

  async function putAgent(body: string, contentType: string) {
    return server.request('PUT', '/v1/tenants/demo/agents/deep', { body, contentType });
  }

  it('deep dotted keys, table headers and JSON nesting are a 400 naming the field', async () => {
    const before = await storeSnapshot(server.store);
    const cases: [string, string, string][] = [
      ['dotted keys', `model = "fixture/echo"\n${'a.'.repeat(5000)}b = 1\n`, 'application/toml'],
      [
        'table header',
        `model = "fixture/echo"\n[${'a.'.repeat(5000)}b]\nx = 1\n`,
        'application/toml',
      ],
      [
        'json',
        `{"model":"fixture/echo","x":${'['.repeat(5000)}${']'.repeat(5000)}}`,
        'application/json',
      ],
    ];
    for (const [name, body, contentType] of cases) {
      const answer = await putAgent(body, contentType);
      assert.equal(answer.status, 400, `${name}: ${answer.text}`);
      assert.equal(answer.body.error.code, 'VALIDATION_FAILED', name);
      assert.match(answer.body.error.message, /^body[.[].*nested deeper than 64 levels/, name);
    }
    assert.equal(await storeSnapshot(server.store), before);
    assert.equal((await server.request('GET', '/healthz')).status, 200);
  });

  it('an output_schema nested deeper than 32 levels is a 400 naming body.output_schema', async () => {
    let schema: Record<string, unknown> = { type: 'string' };
    // 20 levels of {properties: {x: …}}: 40 deep, within the 64 of a body.
    for (let level = 0; level < 20; level += 1) {
      schema = { type: 'object', properties: { x: schema } };
    }
    const answer = await server.request('PUT', '/v1/tenants/demo/agents/deep', {
      body: { model: 'fixture/echo', output_schema: schema },
    });
    assert.equal(answer.status, 400, answer.text);
    assert.match(
      answer.body.error.message,
      /^body\.output_schema: output_schema\.properties.*nested deeper than 32 levels/,
    );
  });

  it('deeply nested tool arguments are a tool error (INVALID_ARGUMENTS), not a crash', () => {
    const tool = defineTool({
      name: 'test_any_json',
      family: 'test',
      effect: 'read_only',
      description: 'takes any JSON',
      input: z.strictObject({ data: z.json() }),
      run: async () => null,
    });
    const deep = `{"data":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    const prepared = prepareCall(
      { call_id: 'c1', name: 'test_any_json', arguments: deep },
      {
        registry: createToolRegistry([tool]),
        agent: { ...AGENT_DEFAULTS, tenant: 't', name: 'a', created_at: '', updated_at: '' },
        run: { tenant: 't', agent: 'a', scope: 's', run_id: 'r1' },
        ports: { now: () => new Date() },
        signal: new AbortController().signal,
        runDeadline: Date.now() + 60_000,
        now: Date.now,
      },
    );
    assert.equal(prepared.kind, 'rejected');
    if (prepared.kind !== 'rejected') return;
    assert.equal(prepared.result.error?.code, 'INVALID_ARGUMENTS');
    assert.match(prepared.result.error?.message ?? '', /^arguments\.data\[0\].*nested deeper/);
  });
});

describe('connectionOwner: what the per-address cap counts', () => {
  it('an IPv4 address (mapped or not) is itself; IPv6 counts by its /64', () => {
    assert.equal(connectionOwner('203.0.113.7'), '203.0.113.7');
    assert.equal(connectionOwner('::ffff:203.0.113.7'), '203.0.113.7');
    assert.equal(connectionOwner('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
    assert.equal(connectionOwner('2001:db8:1:2:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64');
    assert.notEqual(connectionOwner('2001:db8:1:3::1'), connectionOwner('2001:db8:1:2::1'));
    assert.equal(connectionOwner(undefined), null);
  });
});
