// A split deployment on PostgreSQL (`keel serve --role api` + `--role worker` as real
// child processes on one schema): the API process's SSE clients get the `model.delta`
// chunks the worker process streams (relayed over LISTEN/NOTIFY), persisted events stay
// exact; with schedules due and no scheduler process, the API says so (log, /readyz,
// gauge) until a `--role scheduler` process starts and fires them; a worker-role 404
// answers in keel's error shape.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readSse } from '../src/cli/sse-reader.ts';
import { createLiveEvents, splitText } from '../src/runtime/live.ts';
import { openPostgresStore } from '../src/store/postgres/index.ts';
import { MAX_LIVE_QUEUE } from '../src/store/postgres/live-channel.ts';
import type { SseEvent } from '../src/cli/sse-reader.ts';
import {
  DUE_GRACE_MS,
  SCHEDULER_STALE_MS,
  schedulerWarning,
} from '../src/schedules/scheduler-watch.ts';
import { TENANT, call, cleanup, setupTenant } from './helpers/crash-harness.ts';
import type { RoleProcess } from './helpers/keel-roles.ts';
import { RoleProcesses } from './helpers/keel-roles.ts';
import {
  dropSchemas,
  freshSchemaName,
  skipUnlessPostgres,
  urlWithSchema,
} from './helpers/postgres.ts';
import { waitFor } from './helpers/wait-for.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

const skip = await skipUnlessPostgres('test/split-deployment.test.ts');

async function events(url: string, runId: string): Promise<SseEvent[]> {
  const response = await fetch(`${url}/v1/tenants/${TENANT}/runs/${runId}/events`);
  assert.equal(response.status, 200);
  const messages: SseEvent[] = [];
  for await (const message of readSse(response.body as ReadableStream<Uint8Array>)) {
    messages.push(message);
  }
  return messages;
}

describe('split deployment [postgres]', { skip }, () => {
  const processes = new RoleProcesses();
  const schema = freshSchemaName('keel_split');
  let api: RoleProcess;
  let worker: RoleProcess;

  before(async () => {
    const storeUrl = urlWithSchema(schema);
    // The API first: it migrates the schema; the worker then finds it current.
    api = await processes.start('api', storeUrl);
    worker = await processes.start('worker', storeUrl);
    await setupTenant(api.url);
    // Due in a second; nothing fires it until a scheduler process starts (last test).
    const schedule = await call(api.url, 'PUT', `/v1/tenants/${TENANT}/schedules/nightly`, {
      agent: 'a',
      scope: 'nightly',
      payload: { text: 'scheduled' },
      at: new Date(Date.now() + 1000).toISOString(),
    });
    assert.equal(schedule.status, 201, JSON.stringify(schedule.body));
  });
  after(async () => {
    processes.killAll();
    cleanup();
    await dropSchemas([schema]);
  });

  it('an API-role SSE client receives model.delta from a worker process', async () => {
    // The last run's two chunks are longer than one relayed message carries: split.
    const chunksPerRun = [40, 40, 2];
    const runs = chunksPerRun.length;
    let received = 0;
    for (let index = 0; index < runs; index += 1) {
      const chunks = chunksPerRun[index] ?? 1;
      const text = `split streaming ${index} ${'é✓𝄞"\\'.repeat(index * 300)}`;
      const submitted = await call(api.url, 'POST', `/v1/tenants/${TENANT}/turns`, {
        agent: 'a',
        scope: `split-${index}`,
        // The sleep lets the SSE subscription settle before the first chunk.
        payload: { text: `${text}\n@stream ${chunks}\n@sleep 400` },
      });
      assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
      const runId = submitted.body.run_id as string;
      const messages = await events(api.url, runId);
      const deltas = messages.filter((message) => message.event === 'model.delta');
      const joined = deltas.map((m) => JSON.parse(m.data).data.text as string).join('');
      const terminal = JSON.parse(messages.at(-1)?.data ?? '{}');
      assert.equal(terminal.type, 'run.succeeded', JSON.stringify(terminal));
      // Persisted events are exact: every seq once, in order, from 1.
      const seqs = messages.filter((m) => m.id !== null).map((m) => Number(m.id));
      assert.deepEqual(
        seqs,
        seqs.map((_, position) => position + 1),
      );
      assert.ok(
        deltas.every((m) => m.id === null),
        'deltas carry no id',
      );
      // Lossy by design, but on an idle loopback nothing is lost: the chunks add up.
      assert.equal(joined, terminal.data.output.reply);
      const expected = Math.min(chunks, joined.length);
      assert.ok(deltas.length >= expected, `${deltas.length} deltas, ${expected} chunks`);
      received += deltas.length;
    }
    console.log(
      `split[postgres] runs=${runs} chunks_per_run=${chunksPerRun.join('/')} deltas_received=${received} (chunks over 1000 chars are split) worker_pid=${worker.pid}`,
    );
  });

  it('schedules due without a scheduler: log, /readyz detail and gauge; a scheduler process clears it', async () => {
    const started = Date.now();
    const ready = await waitFor(
      'readyz warns',
      async () => {
        const body = (await (await fetch(`${api.url}/readyz`)).json()) as Loose;
        return body.warnings ? body : null;
      },
      { everyMs: 200 },
    );
    assert.equal(ready.ok, true, 'the API stays ready');
    assert.equal(ready.warnings[0].code, 'NO_SCHEDULER_RUNNING');
    assert.equal(ready.warnings[0].due, 1);
    assert.equal(ready.warnings[0].last_beat_at, null);
    assert.match(ready.warnings[0].message, /--role scheduler/);
    const metrics = await (await fetch(`${api.url}/metrics`)).text();
    assert.match(metrics, /^keel_schedules_due_without_scheduler 1$/m);
    await waitFor('the API logs it', () => api.output().includes('SCHEDULES NOT FIRING'), {
      timeoutMs: 20_000,
      everyMs: 100,
    });
    const warnedAfter = Date.now() - started;

    await processes.start('scheduler', urlWithSchema(schema));
    const fired = await waitFor(
      'the schedule fires',
      async () => {
        const runs = await call(api.url, 'GET', `/v1/tenants/${TENANT}/runs?scope=nightly`);
        return (runs.body.runs as Loose[]).length > 0 ? (runs.body.runs as Loose[]) : null;
      },
      { timeoutMs: 30_000, everyMs: 200 },
    );
    const after = (await (await fetch(`${api.url}/readyz`)).json()) as Loose;
    assert.equal(after.warnings, undefined, JSON.stringify(after));
    const cleared = await (await fetch(`${api.url}/metrics`)).text();
    assert.match(cleared, /^keel_schedules_due_without_scheduler 0$/m);
    console.log(
      `split[postgres] no-scheduler warning: logged within ${warnedAfter} ms of the check starting; after a scheduler started: runs=${fired.length}, warning cleared`,
    );
  });

  it('the warning rule: grace for a fresh fire, a recent heartbeat means all is well', () => {
    const now = 1_000_000;
    const base = { now, due: 2, oldest_due_at: now - 60_000, last_beat_at: null };
    assert.match(schedulerWarning(base)?.message ?? '', /no scheduler has ever run/);
    assert.equal(schedulerWarning({ ...base, oldest_due_at: now - DUE_GRACE_MS + 1 }), null);
    assert.equal(schedulerWarning({ ...base, last_beat_at: now - SCHEDULER_STALE_MS }), null);
    assert.match(
      schedulerWarning({ ...base, last_beat_at: now - SCHEDULER_STALE_MS - 1000 })?.message ?? '',
      /no scheduler has run for 16 s/,
    );
    assert.equal(schedulerWarning({ ...base, due: 0, oldest_due_at: null }), null);
  });

  it('the relay is bounded: an oversized message or a full queue is dropped and counted', async () => {
    const url = urlWithSchema(schema);
    const [sender, receiver] = [await openPostgresStore({ url }), await openPostgresStore({ url })];
    try {
      const received: string[] = [];
      receiver.live.onMessage((message) => received.push(message));
      let droppedReported = 0;
      sender.live.onDropped((count) => (droppedReported += count));
      sender.live.send('x'.repeat(8000));
      assert.equal(sender.live.dropped, 1, 'too big for NOTIFY');
      const burst = MAX_LIVE_QUEUE + 300;
      for (let index = 0; index < burst; index += 1) sender.live.send(`m${index}`);
      // The first send's batch left the queue at once; the queue then holds MAX_LIVE_QUEUE.
      const expected = burst - 299;
      await waitFor('the queued messages arrive', () => received.length >= expected, {
        timeoutMs: 20_000,
        everyMs: 20,
      });
      assert.equal(sender.live.dropped, 1 + 299);
      assert.equal(droppedReported, 300);
      assert.deepEqual(received.slice(0, 3), ['m0', 'm1', 'm2'], 'in order');
      // Through LiveEvents: a long delta is split, the receiving process rebuilds it.
      const liveIn = createLiveEvents({ relay: receiver.live });
      const liveOut = createLiveEvents({ relay: sender.live });
      const pieces: string[] = [];
      liveIn.subscribe('run-x', (event) => pieces.push(event.data.text));
      const text = '𝄞'.repeat(1500);
      liveOut.publish('run-x', { type: 'model.delta', data: { step: 1, text } });
      await waitFor('the split delta arrives', () => pieces.join('') === text, { everyMs: 20 });
      assert.equal(pieces.length, splitText(text, 1000).length);
      console.log(
        `split[postgres] relay bound: burst=${burst} delivered=${received.length} dropped=${sender.live.dropped} long_delta_pieces=${pieces.length}`,
      );
    } finally {
      await sender.close();
      await receiver.close();
    }
  });

  it('a worker-role 404 is in keel error shape', async () => {
    const response = await fetch(`${worker.url}/v1/tenants`);
    assert.equal(response.status, 404);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    const body = (await response.json()) as { error: Record<string, unknown> };
    assert.equal(body.error.code, 'ROUTE_NOT_FOUND');
    assert.match(
      String(body.error.message),
      /a worker process serves only \/healthz and \/metrics/,
    );
    assert.equal(typeof body.error.request_id, 'string');
    const health = await fetch(`${worker.url}/healthz`);
    assert.deepEqual(await health.json(), { ok: true, role: 'worker' });
  });
});
