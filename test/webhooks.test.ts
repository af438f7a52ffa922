// Signed webhooks end to end: a whole keel (store + run worker + webhook worker + API)
// and a receiver on loopback that checks every signature with the `standardwebhooks`
// library — not with keel's code. Retries after 500s, `dead` after max attempts, the
// secret shown only on create and rotate, private addresses refused unless allowed.

import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import type { TestKeel } from './helpers/keel-server.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import { waitFor } from './helpers/wait-for.ts';

interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** Answers each path with the next status of its script (the last one repeats). */
function startReceiver(scripts: Record<string, number[]>) {
  const received: Received[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      const headers: Record<string, string> = {};
      for (const [key, value] of Object.entries(request.headers)) {
        if (typeof value === 'string') headers[key] = value;
      }
      received.push({ path, headers, body: Buffer.concat(chunks).toString('utf8') });
      const script = scripts[path] ?? [200];
      const count = received.filter((entry) => entry.path === path).length;
      response.statusCode = script[Math.min(count, script.length) - 1] ?? 200;
      response.end('ok');
    });
  });
  return {
    received,
    server,
    async listen(): Promise<string> {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
  };
}

// Tests read JSON bodies loosely; `Json` keeps the assertions short and is test-only.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

let keel: TestKeel;
let receiverUrl: string;
const receiver = startReceiver({ '/flaky': [500, 500, 200], '/down': [500] });
const secrets = new Map<string, string>();

async function api(method: string, path: string, body?: unknown) {
  const response = await fetch(`${keel.url}/v1/tenants/wh${path}`, {
    method,
    // keel's clients send JSON's media type, with or without a body.
    headers: { 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

async function createHook(name: string, path: string): Promise<void> {
  const created = await api('PUT', `/webhooks/${name}`, { url: `${receiverUrl}${path}` });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  secrets.set(name, created.body.secret as string);
}

async function turnTo(hook: string, text: string): Promise<string> {
  const turn = await api('POST', '/turns', {
    agent: 'a',
    scope: `s:${hook}:${text}`,
    payload: { text },
    delivery: { destination: `webhook:${hook}` },
  });
  assert.equal(turn.status, 202, JSON.stringify(turn.body));
  return turn.body.run_id as string;
}

async function deliveryOf(runId: string): Promise<Json | undefined> {
  const list = await api('GET', `/deliveries?run_id=${runId}`);
  return list.body.deliveries[0] as Json | undefined;
}

function verified(name: string, entry: Received): Json {
  return new Webhook(secrets.get(name) ?? '').verify(entry.body, entry.headers) as Json;
}

before(async () => {
  receiverUrl = await receiver.listen();
  keel = await startTestKeel({
    toml: [
      '[delivery]',
      'max_attempts = 3',
      '[webhooks]',
      'allow_hosts = ["127.0.0.1"]',
      'timeout_ms = 2000',
    ].join('\n'),
  });
  await fetch(`${keel.url}/v1/tenants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'wh' }),
  });
  await api('PUT', '/agents/a', { model: 'fixture/x' });
});

after(async () => {
  await keel.close();
  receiver.server.close();
});

describe('signed webhooks', () => {
  it('shows the whsec_ secret on create and rotate only', async () => {
    await createHook('shown', '/ok');
    assert.match(secrets.get('shown') ?? '', /^whsec_[A-Za-z0-9+/]+=*$/);
    const again = await api('PUT', '/webhooks/shown', { url: `${receiverUrl}/ok2` });
    assert.equal(again.status, 200);
    assert.equal(again.body.secret, undefined);
    assert.equal(again.body.webhook.url, `${receiverUrl}/ok2`);
    const one = await api('GET', '/webhooks/shown');
    const list = await api('GET', '/webhooks');
    for (const text of [JSON.stringify(one.body), JSON.stringify(list.body)]) {
      assert.ok(!text.includes('whsec_'), text);
      assert.ok(!text.includes('secret'), text);
    }
    const rotated = await api('POST', '/webhooks/shown/rotate');
    assert.equal(rotated.status, 200);
    assert.match(rotated.body.secret as string, /^whsec_/);
    assert.notEqual(rotated.body.secret, secrets.get('shown'));
    assert.equal((await api('POST', '/webhooks/nope/rotate')).body.error.code, 'WEBHOOK_NOT_FOUND');
    assert.equal((await api('DELETE', '/webhooks/shown')).status, 200);
    assert.equal((await api('GET', '/webhooks/shown')).status, 404);
  });

  it('POSTs the run output signed; the standardwebhooks library verifies it', async () => {
    await createHook('good', '/good');
    const runId = await turnTo('good', 'hello hook');
    await waitFor('delivered', async () => (await deliveryOf(runId))?.status === 'delivered');
    const entries = receiver.received.filter((entry) => entry.path === '/good');
    assert.equal(entries.length, 1);
    const entry = entries[0] as Received;
    const message = verified('good', entry);
    assert.equal(message.type, 'run.output');
    assert.equal(message.data.run_id, runId);
    assert.deepEqual(message.data.output, { reply: 'echo: hello hook' });
    // A different secret, or a changed body, does not verify.
    const other = new Webhook('whsec_' + Buffer.alloc(32, 7).toString('base64'));
    assert.throws(() => other.verify(entry.body, entry.headers));
    assert.throws(() =>
      new Webhook(secrets.get('good') ?? '').verify(
        entry.body.replace('hello', 'HELLO'),
        entry.headers,
      ),
    );
  });

  it('retries after 500s and delivers; ends dead after max attempts', async () => {
    await createHook('flaky', '/flaky');
    await createHook('down', '/down');
    const flakyRun = await turnTo('flaky', 'retry me');
    const downRun = await turnTo('down', 'never');
    await waitFor(
      'flaky delivered and down dead',
      async () =>
        (await deliveryOf(flakyRun))?.status === 'delivered' &&
        (await deliveryOf(downRun))?.status === 'dead',
      { timeoutMs: 30_000, everyMs: 50 },
    );
    const flaky = receiver.received.filter((entry) => entry.path === '/flaky');
    const down = receiver.received.filter((entry) => entry.path === '/down');
    console.log(`flaky: ${flaky.length} POSTs, down: ${down.length} POSTs (max_attempts 3)`);
    assert.equal(flaky.length, 3);
    assert.equal(down.length, 3);
    // Every attempt is signed and names the same message, so a receiver can deduplicate.
    for (const entry of flaky) assert.equal(verified('flaky', entry).data.run_id, flakyRun);
    assert.equal(new Set(flaky.map((entry) => entry.headers['webhook-id'])).size, 1);
    const dead = (await deliveryOf(downRun)) ?? {};
    assert.equal(dead.attempt, 3);
    assert.match(dead.last_error as string, /500/);
  });

  it('refuses a URL to a private address unless the operator allows the host', async () => {
    for (const url of [
      'http://10.0.0.7/hook',
      'http://169.254.169.254/latest',
      'http://[::1]:8080/x',
      'http://localhost:9/x',
      'ftp://example.com/x',
    ]) {
      const refused = await api('PUT', '/webhooks/private', { url });
      assert.equal(refused.status, 400, url);
      assert.equal(refused.body.error.code, 'VALIDATION_FAILED');
      assert.match(refused.body.error.message as string, /body\.url/);
    }
    assert.equal((await api('GET', '/webhooks/private')).status, 404);
    // 127.0.0.1 is in [webhooks] allow_hosts for this keel.
    const allowed = await api('PUT', '/webhooks/private', { url: `${receiverUrl}/p` });
    assert.equal(allowed.status, 201);
  });

  it('a delivery to a webhook that does not exist fails with the reason', async () => {
    const runId = await turnTo('missing', 'lost');
    await waitFor('failed', async () => (await deliveryOf(runId))?.status === 'failed');
    assert.match((await deliveryOf(runId))?.last_error as string, /no webhook named "missing"/);
  });
});
