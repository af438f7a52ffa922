// GET T/runs/:id/events: live subscriber, late replay, Last-Event-ID resume, two
// subscribers, disconnect cleanup (no leaked listeners), close after the terminal event,
// model.delta chunks (no id) while the model streams, 404s.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KeelClient, StreamEvent } from '../src/cli/client.ts';
import { createClient } from '../src/cli/client.ts';
import { readSse } from '../src/cli/sse-reader.ts';
import type { TestKeel } from './helpers/keel-server.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import { waitFor } from './helpers/wait-for.ts';

let keel: TestKeel;
let client: KeelClient;
const active = { store: 0, live: 0 };

async function turn(text: string, scope: string): Promise<string> {
  const created = await client.request('POST', client.tenantPath('/turns'), {
    agent: 'a',
    scope,
    payload: { text },
  });
  return created.run_id as string;
}

async function collect(runId: string, lastEventId?: number): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of client.events(
    runId,
    lastEventId === undefined ? {} : { lastEventId },
  )) {
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
    const off = subscribeLive(runId, listener);
    return () => {
      active.live -= 1;
      off();
    };
  };
  client = createClient({ url: keel.url, token: null, tenant: 'sse' });
  await client.request('POST', '/v1/tenants', { name: 'sse' });
  await client.request('PUT', client.tenantPath('/agents/a'), { model: 'fixture/x' });
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
    const trace = await client.request('GET', client.tenantPath(`/runs/${runId}/trace`));
    assert.deepEqual(persisted(events), trace.events, 'the stream carries exactly the trace');
  });

  it('a late subscriber gets the whole trace replayed, then the stream closes', async () => {
    const runId = await turn('late', 'late');
    await client.request('GET', client.tenantPath(`/runs/${runId}/wait?timeout_ms=10000`));
    const events = await collect(runId);
    const trace = await client.request('GET', client.tenantPath(`/runs/${runId}/trace`));
    assert.deepEqual(events, trace.events);
  });

  it('Last-Event-ID resumes after that event; past the terminal event the stream closes at once', async () => {
    const runId = await turn('resume\n@call clock_now {}', 'resume');
    await client.request('GET', client.tenantPath(`/runs/${runId}/wait?timeout_ms=10000`));
    const all = await collect(runId);
    const from = all[2]?.seq ?? 0;
    const resumed = await collect(runId, from);
    assert.deepEqual(
      resumed,
      all.filter((e) => (e.seq ?? 0) > from),
    );
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
    const stream = client.events(runId, { signal: controller.signal });
    const first = await stream.next();
    assert.equal((first.value as StreamEvent).type, 'run.queued');
    assert.ok(active.store >= 1 && active.live >= 1, 'the open stream is subscribed');
    controller.abort();
    await stream.return(undefined).catch(() => undefined);
    await settled();
    assert.deepEqual(active, { store: 0, live: 0 });
    const done = await client.request(
      'GET',
      client.tenantPath(`/runs/${runId}/wait?timeout_ms=10000`),
    );
    assert.equal(done.run.status, 'succeeded');
  });

  it('streams model.delta chunks (without an id) that add up to the answer', async () => {
    const runId = await turn('chunks please\n@stream 5\n@sleep 150', 'delta');
    const response = await fetch(`${keel.url}${client.tenantPath(`/runs/${runId}/events`)}`);
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
      const got = await client.request('GET', client.tenantPath(`/runs/${runId}`));
      return (got.run as { status: string }).status === 'running';
    });
    await client.request('POST', client.tenantPath(`/runs/${runId}/cancel`), {});
    const events = await collecting;
    assert.equal(events.at(-1)?.type, 'run.cancelled');
  });

  it('404 for an unknown run and for a run seen through another tenant', async () => {
    const runId = await turn('mine', 'mine');
    await assert.rejects(collect('0190a000-0000-7000-8000-00000000ffff'), {
      code: 'RUN_NOT_FOUND',
    });
    await client.request('POST', '/v1/tenants', { name: 'other' });
    const other = createClient({ url: keel.url, token: null, tenant: 'other' });
    await assert.rejects(
      async () => {
        for await (const event of other.events(runId)) void event;
      },
      { code: 'RUN_NOT_FOUND', status: 404 },
    );
  });
});
