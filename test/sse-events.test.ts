// GET T/runs/:id/events: live subscriber, late replay, Last-Event-ID resume, two
// subscribers, disconnect cleanup (no leaked listeners, also for a client gone before its
// stream opened), close after the terminal event,
// model.delta chunks (no id) while the model streams, 404s.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KeelClient, RunEvent as StreamEvent } from '../src/client/index.ts';
import { createKeelClient, KeelApiError } from '../src/client/index.ts';
import { readSse } from '../src/cli/sse-reader.ts';
import type { TestKeel } from './helpers/keel-server.ts';
import { clientGoneAt } from './helpers/client-gone.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import { waitFor } from './helpers/wait-for.ts';

let keel: TestKeel;
let client: KeelClient;
const active = { store: 0, live: 0 };
/** Subscriptions ever made (live), to know a route got as far as subscribing. */
const made = { live: 0 };

async function turn(text: string, scope: string): Promise<string> {
  const created = await client.turns.submit('sse', { agent: 'a', scope, payload: { text } });
  return created.run_id;
}

/**
 * One request for the stream, read until the server closes it: no reconnect and no stop
 * at the terminal event (unlike keel/client's iterator), so a stream left open would hang
 * the test instead of passing.
 */
async function* openStream(
  runId: string,
  options: { tenant?: string; lastEventId?: number; signal?: AbortSignal } = {},
): AsyncGenerator<StreamEvent> {
  const response = await fetch(
    `${keel.url}/v1/tenants/${options.tenant ?? 'sse'}/runs/${runId}/events`,
    {
      headers: {
        accept: 'text/event-stream',
        ...(options.lastEventId !== undefined && { 'last-event-id': String(options.lastEventId) }),
      },
      ...(options.signal && { signal: options.signal }),
    },
  );
  if (!response.ok) {
    const body = (await response.json()) as { error: { code: string; message: string } };
    throw new KeelApiError(response.status, body.error.code, body.error.message, null);
  }
  for await (const message of readSse(response.body as ReadableStream<Uint8Array>))
    yield JSON.parse(message.data) as StreamEvent;
}

async function collect(runId: string, lastEventId?: number): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of openStream(runId, lastEventId === undefined ? {} : { lastEventId })) {
    events.push(event);
  }
  return events;
}

const persisted = (events: StreamEvent[]): StreamEvent[] =>
  events.filter((e) => e.seq !== undefined);

before(async () => {
  keel = await startTestKeel();
  // Count live subscriptions of both sources, to prove a closed stream leaves none.
  const subscribeStore = keel.store.subscribe.bind(keel.store);
  keel.store.subscribe = (listener) => {
    active.store += 1;
    const off = subscribeStore(listener);
    return () => {
      active.store -= 1;
      off();
    };
  };
  const subscribeLive = keel.live.subscribe.bind(keel.live);
  keel.live.subscribe = (runId, listener) => {
    active.live += 1;
    made.live += 1;
    const off = subscribeLive(runId, listener);
    return () => {
      active.live -= 1;
      off();
    };
  };
  client = createKeelClient({ baseUrl: keel.url });
  await client.tenants.create({ name: 'sse' });
  await client.agents.put('sse', 'a', { model: 'fixture/x' });
});

after(async () => {
  await keel.close();
});

async function settled(): Promise<void> {
  await waitFor('every subscription released', () => active.store === 0 && active.live === 0);
}

describe('run events (SSE)', () => {
  it('a live subscriber sees every persisted event in order and the stream closes after the terminal one', async () => {
    const runId = await turn('hi\n@call clock_now {}\n@sleep 100', 'live');
    const events = await collect(runId);
    const seqs = persisted(events).map((e) => e.seq);
    assert.deepEqual(
      seqs,
      [...seqs].sort((a, b) => (a ?? 0) - (b ?? 0)),
    );
    assert.equal(events[0]?.type, 'run.queued');
    assert.equal(events.at(-1)?.type, 'run.succeeded');
    assert.ok(events.some((e) => e.type === 'tool.result'));
    const trace = await client.runs.trace('sse', runId);
    assert.deepEqual(persisted(events), trace.events, 'the stream carries exactly the trace');
  });

  it('a late subscriber gets the whole trace replayed, then the stream closes', async () => {
    const runId = await turn('late', 'late');
    await client.turns.wait('sse', runId, 10_000);
    const events = await collect(runId);
    const trace = await client.runs.trace('sse', runId);
    assert.deepEqual(persisted(events), trace.events);
    // The model call's text, which this subscriber saw none of, as one whole delta just
    // before the call's response.
    const at = events.findIndex((event) => event.type === 'model.delta');
    assert.deepEqual(events[at], {
      type: 'model.delta',
      data: { step: 1, text: 'echo: late', whole: true },
    });
    assert.equal(events[at + 1]?.type, 'model.response');
    assert.equal(events.filter((event) => event.type === 'model.delta').length, 1);
  });

  it('Last-Event-ID resumes after that event; past the terminal event the stream closes at once', async () => {
    const runId = await turn('resume\n@call clock_now {}', 'resume');
    await client.turns.wait('sse', runId, 10_000);
    const all = await collect(runId);
    const from = all[2]?.seq ?? 0;
    const resumed = await collect(runId, from);
    // Everything after that event, the whole delta before the answer's response included.
    assert.deepEqual(resumed, all.slice(all.findIndex((e) => e.seq === from) + 1));
    assert.equal(resumed.filter((e) => e.type === 'model.delta' && e.data.whole).length, 1);
    assert.deepEqual(await collect(runId, all.at(-1)?.seq), []);
  });

  it('two subscribers of one run see the same events', async () => {
    const runId = await turn('two\n@call clock_now {}\n@sleep 80', 'two');
    const [first, second] = await Promise.all([collect(runId), collect(runId)]);
    assert.deepEqual(persisted(first ?? []), persisted(second ?? []));
    assert.equal(first?.at(-1)?.type, 'run.succeeded');
    await settled();
    assert.deepEqual(active, { store: 0, live: 0 });
  });

  it('a subscriber that disconnects is cleaned up (no leaked listeners) and the run goes on', async () => {
    const runId = await turn('bye\n@sleep 400', 'disconnect');
    const controller = new AbortController();
    const stream = openStream(runId, { signal: controller.signal });
    const first = await stream.next();
    assert.equal((first.value as StreamEvent).type, 'run.queued');
    assert.ok(active.store >= 1 && active.live >= 1, 'the open stream is subscribed');
    controller.abort();
    await stream.return(undefined).catch(() => undefined);
    await settled();
    assert.deepEqual(active, { store: 0, live: 0 });
    const done = await client.turns.wait('sse', runId, 10_000);
    assert.equal(done.run.status, 'succeeded');
  });

  it('a client gone before its stream opened leaves no listener behind (the run is not watched)', async () => {
    const runId = await turn('@sleep 60000', 'gone-early');
    // Hold the route in its first read of the run while the client disconnects.
    const getRun = keel.store.getRun.bind(keel.store);
    let entered = (): void => undefined;
    const inRead = new Promise<void>((resolve) => (entered = resolve));
    let release = (): void => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    keel.store.getRun = async (tenant, id) => {
      if (id === runId) {
        entered();
        await released;
      }
      return getRun(tenant, id);
    };
    try {
      await clientGoneAt(keel.api.server, runId, inRead, (signal) =>
        fetch(`${keel.url}/v1/tenants/sse/runs/${runId}/events`, { signal }),
      );
      const subscribed = made.live;
      release();
      // The route goes on with its subscriptions; a closed stream must release them at once.
      await waitFor('the route subscribed', () => made.live > subscribed);
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(active, { store: 0, live: 0 });
      assert.equal(keel.live.watched(runId), false);
    } finally {
      keel.store.getRun = getRun;
      await client.runs.cancel('sse', runId);
    }
  });

  it('streams model.delta chunks (without an id) that add up to the answer', async () => {
    const runId = await turn('chunks please\n@stream 5\n@sleep 150', 'delta');
    const response = await fetch(`${keel.url}/v1/tenants/sse/runs/${runId}/events`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.ok(response.headers.get('x-request-id'));
    const messages = [];
    for await (const message of readSse(response.body as ReadableStream<Uint8Array>))
      messages.push(message);
    const deltas = messages.filter((m) => m.event === 'model.delta');
    assert.equal(deltas.length, 5);
    assert.ok(deltas.every((m) => m.id === null));
    assert.ok(messages.filter((m) => m.event !== 'model.delta').every((m) => m.id !== null));
    const text = deltas.map((m) => JSON.parse(m.data).data.text as string).join('');
    const succeeded = JSON.parse(messages.at(-1)?.data ?? '{}');
    assert.equal(text, 'echo: chunks please');
    assert.equal(succeeded.data.output.reply, text);
    // Deltas come after their step's model.request and before its model.response.
    const kinds = messages.map((m) => m.event);
    assert.ok(kinds.lastIndexOf('model.request') < kinds.indexOf('model.delta'));
    assert.ok(kinds.lastIndexOf('model.delta') < kinds.lastIndexOf('model.response'));
  });

  it('a cancelled run ends the stream with run.cancelled', async () => {
    const runId = await turn('@sleep 5000', 'cancel');
    const collecting = collect(runId);
    // Cancel a run that is in its model call, not one still queued.
    await waitFor('the run is running', async () => {
      const got = await client.runs.get('sse', runId);
      return got.run.status === 'running';
    });
    await client.runs.cancel('sse', runId);
    const events = await collecting;
    assert.equal(events.at(-1)?.type, 'run.cancelled');
  });

  it('404 for an unknown run and for a run seen through another tenant', async () => {
    const runId = await turn('mine', 'mine');
    await assert.rejects(collect('0190a000-0000-7000-8000-00000000ffff'), {
      code: 'RUN_NOT_FOUND',
    });
    await client.tenants.create({ name: 'other' });
    await assert.rejects(
      async () => {
        for await (const event of openStream(runId, { tenant: 'other' })) void event;
      },
      { code: 'RUN_NOT_FOUND', status: 404 },
    );
  });
});
