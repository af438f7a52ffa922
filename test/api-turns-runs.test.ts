// Turns (idempotency, busy scopes, body limits, strictness) and runs (paging, filters,
// wait, cancel, trace) over HTTP against a real SQLite store.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { emptyUsage } from '../src/types.ts';
import type { ApiServer } from './helpers/api-server.ts';
import { seedTenant, startApiServer, storeSnapshot } from './helpers/api-server.ts';
import { waitFor } from './helpers/wait-for.ts';

const TURN_LIMIT = 4096;

function turn(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { agent: 'assistant', scope: 'chat:1', payload: { text: 'hello' }, ...overrides };
}

/** Plays a worker: claims the next run and finalizes it as succeeded. */
async function finishNextRun(server: ApiServer, reply = 'done'): Promise<string> {
  const claimed = await server.store.claimNextRun({ owner: 'test', lease_ms: 30_000 });
  assert.ok(claimed, 'a run to claim');
  await server.store.finalizeRun(
    { run_id: claimed.run.run_id, attempt: claimed.run.attempt },
    {
      status: 'succeeded',
      output: { reply },
      reply_text: reply,
      steps: 1,
      usage: emptyUsage(),
      elapsed_ms: 1,
      context_window: 20,
    },
  );
  return claimed.run.run_id;
}

/** A server of the test's own, so what the test changes no other test can see. */
async function ownServer(): Promise<ApiServer> {
  const server = await startApiServer();
  await seedTenant(server, 'demo');
  return server;
}

/** Counts the store subscriptions that are open: a waiting `wait` holds one. */
function countSubscriptions(server: ApiServer): { open(): number; restore(): void } {
  const store = server.store;
  const subscribe = store.subscribe.bind(store);
  let open = 0;
  store.subscribe = (listener) => {
    open += 1;
    const unsubscribe = subscribe(listener);
    return () => {
      open -= 1;
      unsubscribe();
    };
  };
  return { open: () => open, restore: () => (store.subscribe = subscribe) };
}

describe('turns', () => {
  let server: ApiServer;
  before(async () => {
    server = await startApiServer({
      config: { limits: { turn_body_bytes: TURN_LIMIT, artifact_bytes: 1 << 20 } },
    });
    await seedTenant(server, 'demo');
  });
  after(async () => server.close());

  it('202 for a new turn, 200 with the same run_id on replay, 422 on reuse', async () => {
    const body = turn({ request_id: 'tg-update-1', delivery: { destination: 'tg:42' } });
    const first = await server.request('POST', '/v1/tenants/demo/turns', { body });
    assert.equal(first.status, 202);
    assert.deepEqual(Object.keys(first.body).sort(), ['deduplicated', 'run_id', 'status']);
    assert.equal(first.body.status, 'queued');
    assert.equal(first.body.deduplicated, false);

    const replay = await server.request('POST', '/v1/tenants/demo/turns', { body });
    assert.equal(replay.status, 200);
    assert.equal(replay.body.run_id, first.body.run_id);
    assert.equal(replay.body.deduplicated, true);

    const before = await storeSnapshot(server.store);
    const reused = await server.request('POST', '/v1/tenants/demo/turns', {
      body: { ...body, payload: { text: 'something else' } },
    });
    assert.equal(reused.status, 422);
    assert.equal(reused.body.error.code, 'IDEMPOTENCY_KEY_REUSED');
    assert.equal(await storeSnapshot(server.store), before);

    const run = await server.request('GET', `/v1/tenants/demo/runs/${first.body.run_id}`);
    assert.deepEqual(run.body.run.delivery, { destination: 'tg:42' });
    assert.equal(run.body.run.request_id, 'tg-update-1');
  });

  it('on_busy reject → 409 SCOPE_BUSY while the scope has a run; enqueue queues behind', async () => {
    const first = await server.request('POST', '/v1/tenants/demo/turns', {
      body: turn({ scope: 'busy' }),
    });
    assert.equal(first.status, 202);
    const before = await storeSnapshot(server.store);
    const rejected = await server.request('POST', '/v1/tenants/demo/turns', {
      body: turn({ scope: 'busy', on_busy: 'reject' }),
    });
    assert.equal(rejected.status, 409);
    assert.equal(rejected.body.error.code, 'SCOPE_BUSY');
    assert.equal(await storeSnapshot(server.store), before);
    const queued = await server.request('POST', '/v1/tenants/demo/turns', {
      body: turn({ scope: 'busy' }),
    });
    assert.equal(queued.status, 202);
  });

  it('rejects bad turns by field and writes nothing', async () => {
    const cases: Array<[string, string | Record<string, unknown>, number, string, string]> = [
      ['unknown agent', turn({ agent: 'ghost' }), 404, 'AGENT_NOT_FOUND', 'ghost'],
      ['unknown field', turn({ priority: 1 }), 400, 'UNKNOWN_FIELD', 'body.priority'],
      [
        'unknown delivery field',
        turn({ delivery: { destination: 'x', via: 'y' } }),
        400,
        'UNKNOWN_FIELD',
        'body.delivery.via',
      ],
      [
        'empty destination',
        turn({ delivery: { destination: '' } }),
        400,
        'VALIDATION_FAILED',
        'body.delivery.destination',
      ],
      [
        'no destination',
        turn({ delivery: {} }),
        400,
        'VALIDATION_FAILED',
        'body.delivery.destination',
      ],
      ['payload not an object', turn({ payload: 'hi' }), 400, 'VALIDATION_FAILED', 'body.payload'],
      ['payload array', turn({ payload: [1] }), 400, 'VALIDATION_FAILED', 'body.payload'],
      [
        'missing scope',
        { agent: 'assistant', payload: {} },
        400,
        'VALIDATION_FAILED',
        'body.scope',
      ],
      ['empty scope', turn({ scope: '' }), 400, 'VALIDATION_FAILED', 'body.scope'],
      ['scope too long', turn({ scope: 'é'.repeat(129) }), 400, 'VALIDATION_FAILED', 'body.scope'],
      ['control char scope', turn({ scope: 'a\nb' }), 400, 'VALIDATION_FAILED', 'body.scope'],
      [
        'long request_id',
        turn({ request_id: 'r'.repeat(201) }),
        400,
        'VALIDATION_FAILED',
        'body.request_id',
      ],
      ['bad on_busy', turn({ on_busy: 'wait' }), 400, 'VALIDATION_FAILED', 'body.on_busy'],
      ['malformed JSON', '{"agent": "assistant",', 400, 'INVALID_JSON', 'JSON'],
      [
        'proto key',
        '{"agent":"assistant","scope":"s","payload":{"__proto__":{"x":1}}}',
        400,
        'VALIDATION_FAILED',
        '__proto__',
      ],
      ['no body', '', 400, 'VALIDATION_FAILED', 'body'],
      [
        'oversized',
        turn({ payload: { text: 'x'.repeat(TURN_LIMIT) } }),
        413,
        'PAYLOAD_TOO_LARGE',
        '',
      ],
    ];
    for (const [label, body, status, code, named] of cases) {
      const before = await storeSnapshot(server.store);
      const response = await server.request('POST', '/v1/tenants/demo/turns', { body });
      assert.equal(response.status, status, `${label}: ${response.text}`);
      assert.equal(response.body.error.code, code, label);
      assert.ok(
        response.body.error.message.includes(named),
        `${label}: ${response.body.error.message}`,
      );
      assert.equal(await storeSnapshot(server.store), before, `${label} wrote something`);
    }
  });

  it('415 for a body that is not JSON', async () => {
    const response = await server.request('POST', '/v1/tenants/demo/turns', {
      body: 'agent=assistant',
      contentType: 'application/x-www-form-urlencoded',
    });
    assert.equal(response.status, 415);
    assert.equal(response.body.error.code, 'UNSUPPORTED_MEDIA_TYPE');
  });
});

describe('runs', () => {
  let server: ApiServer;
  const runIds: string[] = [];
  before(async () => {
    server = await startApiServer();
    await seedTenant(server, 'demo');
    await seedTenant(server, 'demo', 'other-agent');
    for (let index = 0; index < 7; index += 1) {
      const response = await server.request('POST', '/v1/tenants/demo/turns', {
        body: turn({ scope: `page:${index}`, agent: index % 2 ? 'other-agent' : 'assistant' }),
      });
      runIds.push(response.body.run_id);
    }
  });
  after(async () => server.close());

  it('pages newest first with a keyset cursor: no duplicates, no gaps', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const page = await server.request('GET', `/v1/tenants/demo/runs?limit=3${query}`);
      assert.equal(page.status, 200, page.text);
      assert.ok(page.body.runs.length <= 3);
      seen.push(...page.body.runs.map((run: { run_id: string }) => run.run_id));
      cursor = page.body.next_cursor;
      pages += 1;
    } while (cursor && pages < 10);
    assert.deepEqual(seen, [...runIds].reverse());
    assert.equal(pages, 3);
  });

  it('filters by agent, scope and status; validates limit', async () => {
    const byAgent = await server.request('GET', '/v1/tenants/demo/runs?agent=other-agent');
    assert.equal(byAgent.body.runs.length, 3);
    const byScope = await server.request(
      'GET',
      `/v1/tenants/demo/runs?scope=${encodeURIComponent('page:4')}`,
    );
    assert.deepEqual(
      byScope.body.runs.map((run: { run_id: string }) => run.run_id),
      [runIds[4]],
    );
    const queued = await server.request('GET', '/v1/tenants/demo/runs?status=queued&source=api');
    assert.equal(queued.body.runs.length, 7);
    const succeeded = await server.request('GET', '/v1/tenants/demo/runs?status=succeeded');
    assert.equal(succeeded.body.runs.length, 0);
    for (const bad of ['limit=0', 'limit=201', 'limit=abc', 'status=done', 'colour=red']) {
      const response = await server.request('GET', `/v1/tenants/demo/runs?${bad}`);
      assert.equal(response.status, 400, bad);
      assert.ok(response.body.error.message.includes('querystring.'), bad);
    }
  });

  it('query defaults reach the store as numbers', async () => {
    const store = server.store;
    const listRuns = store.listRuns.bind(store);
    const getTrace = store.getTrace.bind(store);
    const seen: unknown[] = [];
    store.listRuns = async (tenant, filter, limit, cursor) => {
      seen.push(limit);
      return listRuns(tenant, filter, limit, cursor);
    };
    store.getTrace = async (tenant, runId, after, limit) => {
      seen.push(after, limit);
      return getTrace(tenant, runId, after, limit);
    };
    try {
      await server.request('GET', '/v1/tenants/demo/runs');
      await server.request('GET', `/v1/tenants/demo/runs/${runIds[0]}/trace`);
      assert.deepEqual(seen, [50, 0, 1000]);
    } finally {
      store.listRuns = listRuns;
      store.getTrace = getTrace;
    }
  });

  it('wait returns as soon as the run is finalized, and times out otherwise', async () => {
    const own = await ownServer();
    const subscriptions = countSubscriptions(own);
    try {
      const target = (await own.request('POST', '/v1/tenants/demo/turns', { body: turn() })).body
        .run_id as string;
      const timedOut = await own.request(
        'GET',
        `/v1/tenants/demo/runs/${target}/wait?timeout_ms=50`,
      );
      assert.equal(timedOut.status, 200);
      assert.equal(timedOut.body.timed_out, true);
      assert.equal(timedOut.body.run.status, 'queued');

      const waiting = own.request('GET', `/v1/tenants/demo/runs/${target}/wait?timeout_ms=20000`);
      await waitFor('the waiter subscribed', () => subscriptions.open() === 1);
      const finished = await finishNextRun(own, 'first');
      assert.equal(finished, target);
      const result = await waiting;
      // Woken by the finalize, not by its 20 s timeout.
      assert.equal(result.body.timed_out, false);
      assert.equal(result.body.run.status, 'succeeded');
      assert.deepEqual(result.body.run.output, { reply: 'first' });

      const immediate = await own.request(
        'GET',
        `/v1/tenants/demo/runs/${target}/wait?timeout_ms=0`,
      );
      assert.equal(immediate.body.timed_out, false);
      const badTimeout = await own.request(
        'GET',
        `/v1/tenants/demo/runs/${target}/wait?timeout_ms=120001`,
      );
      assert.equal(badTimeout.status, 400);
    } finally {
      subscriptions.restore();
      await own.close();
    }
  });

  it('wait stops waiting when the client disconnects', async () => {
    const subscriptions = countSubscriptions(server);
    try {
      const controller = new AbortController();
      const pending = fetch(`${server.url}/v1/tenants/demo/runs/${runIds[1]}/wait`, {
        headers: { authorization: `Bearer ${server.adminToken}` },
        signal: controller.signal,
      });
      await waitFor('the waiter subscribed', () => subscriptions.open() === 1);
      controller.abort();
      await assert.rejects(pending);
      await waitFor(
        'the waiter unsubscribed after the disconnect',
        () => subscriptions.open() === 0,
      );
      assert.equal((await server.request('GET', '/healthz')).status, 200);
    } finally {
      subscriptions.restore();
    }
  });

  it('cancel: queued → cancelled with a trace event; terminal → unchanged 200', async () => {
    const own = await ownServer();
    try {
      await cancelChecks(own);
    } finally {
      await own.close();
    }
  });

  async function cancelChecks(server: ApiServer): Promise<void> {
    const submit = async (scope: string) =>
      (await server.request('POST', '/v1/tenants/demo/turns', { body: turn({ scope }) })).body
        .run_id as string;
    const succeeded = await submit('cancel:done');
    const target = await submit('cancel:queued');
    assert.equal(await finishNextRun(server), succeeded);
    const cancelled = await server.request('POST', `/v1/tenants/demo/runs/${target}/cancel`, {
      body: { reason: 'user changed their mind' },
    });
    assert.equal(cancelled.status, 200);
    assert.equal(cancelled.body.run.status, 'cancelled');
    const trace = await server.request('GET', `/v1/tenants/demo/runs/${target}/trace`);
    const types = trace.body.events.map((event: { type: string }) => event.type);
    assert.ok(types.includes('run.cancelled'), types.join(','));

    const again = await server.request('POST', `/v1/tenants/demo/runs/${target}/cancel`);
    assert.equal(again.status, 200);
    assert.equal(again.body.run.status, 'cancelled');
    assert.equal(again.body.run.finished_at, cancelled.body.run.finished_at);

    const unchanged = await server.request('POST', `/v1/tenants/demo/runs/${succeeded}/cancel`, {
      body: {},
    });
    assert.equal(unchanged.status, 200);
    assert.equal(unchanged.body.run.status, 'succeeded');

    const unknownField = await server.request('POST', `/v1/tenants/demo/runs/${target}/cancel`, {
      body: { why: 'x' },
    });
    assert.equal(unknownField.body.error.code, 'UNKNOWN_FIELD');
  }

  it('trace pages with after and limit', async () => {
    const own = await ownServer();
    try {
      await own.request('POST', '/v1/tenants/demo/turns', { body: turn() });
      await traceChecks(own, await finishNextRun(own));
    } finally {
      await own.close();
    }
  });

  async function traceChecks(server: ApiServer, target: string): Promise<void> {
    const all = await server.request('GET', `/v1/tenants/demo/runs/${target}/trace`);
    assert.ok(all.body.events.length >= 3, all.text);
    const seqs = all.body.events.map((event: { seq: number }) => event.seq);
    assert.deepEqual(
      seqs,
      [...seqs].sort((a: number, b: number) => a - b),
    );
    const first = await server.request('GET', `/v1/tenants/demo/runs/${target}/trace?limit=1`);
    assert.equal(first.body.events.length, 1);
    const rest = await server.request(
      'GET',
      `/v1/tenants/demo/runs/${target}/trace?after=${first.body.events[0].seq}`,
    );
    assert.deepEqual(
      rest.body.events.map((event: { seq: number }) => event.seq),
      seqs.slice(1),
    );
    const tooMany = await server.request('GET', `/v1/tenants/demo/runs/${target}/trace?limit=1001`);
    assert.equal(tooMany.status, 400);
    const missing = await server.request(
      'GET',
      '/v1/tenants/demo/runs/01900000-0000-7000-8000-000000000000/trace',
    );
    assert.equal(missing.body.error.code, 'RUN_NOT_FOUND');
  }
});
