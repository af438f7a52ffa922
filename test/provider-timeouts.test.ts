// A provider's timeout_ms against a real loopback server that stalls: one that accepts a
// request and never answers, and ones that send headers and part of a body (SSE or JSON)
// and then go silent. Through the real adapter path (createConfiguredProviders → AI SDK
// provider package → node:http transport), the call fails within timeout_ms plus a small
// margin as a retryable timeout, the server sees its connection closed, and the loop's
// retry policy retries it and then fails the step MODEL_TIMEOUT — a whole keel too, with
// timeout_ms from keel.toml. A caller's abort within the timeout stays an abort; an
// answer inside it is untouched.

import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createKeelClient } from '../src/client/index.ts';
import { createMetrics } from '../src/metrics.ts';
import { createConfiguredProviders } from '../src/providers/configured.ts';
import type { ModelRequest, Provider } from '../src/providers/provider.ts';
import { ProviderError } from '../src/providers/provider.ts';
import { callModel } from '../src/runtime/model-call.ts';
import { RunControl } from '../src/runtime/run-control.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import { fixture } from './helpers/replay-server.ts';
import { waitFor } from './helpers/wait-for.ts';

const TIMEOUT_MS = 1000;
/** How late past timeout_ms a failure may come on a shared, busy machine. */
const MARGIN_MS = 750;

/** Per request path: when it arrived, and when the server saw its socket close. */
const seen = new Map<string, { arrived: number; closed: number | null }[]>();

/** The first `count` SSE events of a recorded response (headers and a partial body). */
function firstEvents(file: string, count: number): string {
  return `${fixture(file).split('\n\n').slice(0, count).join('\n\n')}\n\n`;
}

function stall(request: IncomingMessage, response: ServerResponse): void {
  const path = request.url ?? '';
  const record = { arrived: Date.now(), closed: null as number | null };
  seen.set(path, [...(seen.get(path) ?? []), record]);
  request.socket.once('close', () => (record.closed = Date.now()));
  request.resume();
  request.on('end', () => {
    if (path.startsWith('/never/')) return; // accepted, never answered
    if (path.startsWith('/slow/')) {
      // A whole answer, inside the timeout.
      setTimeout(() => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.end(fixture('openai-chat-text.sse'));
      }, TIMEOUT_MS / 4);
      return;
    }
    if (path.startsWith('/json/')) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"id":"chatcmpl-stalled","object":"chat.completion","choices":[');
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write(
      path.endsWith('/messages')
        ? firstEvents('anthropic-messages-tool-use.sse', 4)
        : firstEvents('openai-chat-text.sse', 2),
    );
  });
}

const server = createServer(stall);
let providers: Record<string, Provider>;
let url = '';

before(async () => {
  // The provider packages load on a provider's first call, before its request and its
  // timeout start; loaded here, the measured calls time the request alone.
  await Promise.all([import('@ai-sdk/openai-compatible'), import('@ai-sdk/anthropic')]);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const compat = (prefix: string, extra: object = {}) => ({
    type: 'openai-compatible' as const,
    base_url: `${url}/${prefix}/v1`,
    timeout_ms: TIMEOUT_MS,
    ...extra,
  });
  providers = createConfiguredProviders(
    {
      // Streamed, as these servers answer (the default, "when-watched", would ask whole).
      never: compat('never', { stream: true }),
      midstream: compat('mid', { stream: true }),
      retried: compat('retried', { stream: true }),
      aborted: compat('aborted', { stream: true }),
      slow: compat('slow', { stream: true }),
      json: compat('json', { stream: false }),
      claude: {
        type: 'anthropic',
        base_url: `${url}/claude/v1`,
        api_key_env: 'K',
        timeout_ms: TIMEOUT_MS,
        stream: true,
      },
    },
    { claude: 'sk-ant-test' },
  );
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function request(extra: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: 'm1',
    system: 'You are terse.',
    context: [],
    entries: [
      {
        kind: 'user',
        body: { text: 'hello', payload: {} },
        run_id: 'r1',
        seq: 1,
        attempt: 1,
        ts: '',
      },
    ],
    tools: [],
    temperature: 0,
    max_tokens: 64,
    signal: new AbortController().signal,
    ...extra,
  };
}

function provider(name: string): Provider {
  const found = providers[name];
  assert.ok(found, name);
  return found;
}

/** Calls `name`, expecting a timeout; returns how long the call took. */
async function timesOut(name: string, path: string, extra: Partial<ModelRequest> = {}) {
  const started = Date.now();
  const error = await provider(name)
    .complete(request(extra))
    .then(
      () => assert.fail(`${name}: answered`),
      (caught: unknown) => caught,
    );
  const failedAt = Date.now();
  assert.ok(error instanceof ProviderError, `${name}: ${String(error)}`);
  assert.deepEqual([error.timedOut, error.retryable, error.status], [true, true, null], name);
  assert.match(error.message, /within 1000 ms \(timeout_ms\)/);
  const tookMs = failedAt - started;
  assert.ok(tookMs >= TIMEOUT_MS, `${name}: failed after ${tookMs} ms, before timeout_ms`);
  assert.ok(tookMs < TIMEOUT_MS + MARGIN_MS, `${name}: failed after ${tookMs} ms`);
  // The connection is closed, not left open to drain or hang on.
  const record = seen.get(path)?.at(-1);
  assert.ok(record, `${name}: the server saw ${path}`);
  const closed = await waitFor(`${name}: the server saw the socket close`, () => record.closed, {
    timeoutMs: 2000,
  });
  assert.ok(closed - record.arrived < TIMEOUT_MS + MARGIN_MS, `${name}: held open too long`);
  assert.ok(closed - failedAt < MARGIN_MS, `${name}: closed ${closed - failedAt} ms after`);
  return tookMs;
}

describe('provider timeout_ms', { timeout: 45_000 }, () => {
  it('a request no server answers, a stream and a JSON body stalled midway: each fails as a timeout within timeout_ms, its connection closed', async () => {
    const deltas: string[] = [];
    const took = await Promise.all([
      timesOut('never', '/never/v1/chat/completions'),
      timesOut('midstream', '/mid/v1/chat/completions', {
        onDelta: (text) => deltas.push(text),
      }),
      timesOut('json', '/json/v1/chat/completions'),
      timesOut('claude', '/claude/v1/messages'),
    ]);
    // The stalled stream had begun: its first text reached the caller before the cut.
    assert.deepEqual(deltas, ['It is 14:05 ']);
    console.log(`timeout_ms ${TIMEOUT_MS}: calls failed after ${took.join(', ')} ms`);
  });

  it('the loop retries a timed-out call as transient, then fails the step MODEL_TIMEOUT', async () => {
    const control = new RunControl();
    const retries: { attempt: number; code: string }[] = [];
    const { entries, system, context, tools, model, temperature, max_tokens } = request();
    const result = await callModel({
      provider: provider('retried'),
      request: { entries, system, context, tools, model, temperature, max_tokens },
      control,
      policy: { maxRetries: 1, baseDelayMs: 10, maxDelayMs: 10 },
      metrics: createMetrics(),
      now: Date.now,
      onRetry: async ({ attempt, error }) => void retries.push({ attempt, code: error.code }),
    });
    assert.equal(result.kind, 'failed');
    assert.ok(result.kind === 'failed');
    assert.equal(result.error.code, 'MODEL_TIMEOUT');
    assert.match(result.error.message, /^retried: no complete answer within 1000 ms/);
    assert.deepEqual(retries, [{ attempt: 1, code: 'MODEL_TIMEOUT' }]);
    assert.equal(seen.get('/retried/v1/chat/completions')?.length, 2, 'one try and one retry');
  });

  it("a caller's abort inside the timeout stays an abort; an answer inside it is untouched", async () => {
    const caller = new AbortController();
    setTimeout(() => caller.abort('cancelled'), 100);
    const error = await provider('aborted')
      .complete(request({ signal: caller.signal }))
      .catch((caught: unknown) => caught);
    assert.ok(!(error instanceof ProviderError), `not a provider error: ${String(error)}`);
    const answer = await provider('slow').complete(request());
    assert.equal(answer.assistant.text, 'It is 14:05 in Paris and 18 °C.');
  });

  it('end to end: keel.toml timeout_ms reaches the worker; each try is cut, retried, and the run fails MODEL_TIMEOUT', async () => {
    const keel = await startTestKeel({
      toml: `[providers.stalled]\ntype = "openai-compatible"\nbase_url = "${url}/e2e/v1"\ntimeout_ms = ${TIMEOUT_MS}\n`,
    });
    try {
      const client = createKeelClient({ baseUrl: keel.url });
      await client.tenants.create({ name: 'to' });
      await client.agents.put('to', 'a', { model: 'stalled/m1' });
      const created = await client.turns.submit('to', {
        agent: 'a',
        scope: 's',
        payload: { text: 'hello' },
      });
      const done = await client.turns.wait('to', created.run_id, 20_000);
      assert.equal(done.run.status, 'failed');
      assert.equal(done.run.error?.code, 'MODEL_TIMEOUT');
      const trace = await client.runs.trace('to', created.run_id);
      const retries = (trace.events as unknown as { type: string; data: Record<string, unknown> }[])
        .filter((event) => event.type === 'model.retry')
        .map((event) => (event.data.error as { code: string }).code);
      assert.deepEqual(retries, ['MODEL_TIMEOUT', 'MODEL_TIMEOUT', 'MODEL_TIMEOUT']);
      const tries = seen.get('/e2e/v1/chat/completions') ?? [];
      assert.equal(tries.length, 4, 'one try and three retries');
      assert.ok(
        tries.every((record) => record.closed !== null),
        'every try was closed',
      );
    } finally {
      await keel.close();
    }
  });
});
