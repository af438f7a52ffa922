// The worker against a real SQLite store: cancel aborts the model call, concurrency
// limit, FIFO lanes, deleted agents, fencing end to end, resume, drain.

import assert from 'node:assert/strict';
import { setImmediate } from 'node:timers/promises';
import { describe, it } from 'node:test';
import pino from 'pino';
import { inertFailpoints } from '../src/failpoints.ts';
import { createProviderRegistry } from '../src/providers/registry.ts';
import { finalizeRun } from '../src/runtime/finalize.ts';
import { createWorker } from '../src/runtime/worker.ts';
import type { Store } from '../src/store/store.ts';
import type { Run } from '../src/types.ts';
import { emptyUsage } from '../src/types.ts';
import { waitFor } from './helpers/wait-for.ts';
import { TENANT, openHarness, types } from './runtime-harness.ts';

const silent = pino({ level: 'silent' });

async function until(check: () => Promise<boolean> | boolean, timeoutMs = 5000): Promise<void> {
  await waitFor('the condition', check, { timeoutMs });
}

async function status(store: Store, runId: string): Promise<Run['status'] | undefined> {
  return (await store.getRun(TENANT, runId))?.status;
}

function ms(iso: string | null): number {
  return iso ? Date.parse(iso) : NaN;
}

describe('worker', () => {
  it('cancel during @sleep 5000: cancelled fast, model call aborted, nothing written', async () => {
    const h = await openHarness();
    try {
      const runId = await h.submit('@sleep 5000\nhi', { delivery: { destination: 'tg:1' } });
      await until(() => h.model.inFlight === 1);
      const cancelledAt = Date.now();
      const cancelled = await h.store.cancelRun(TENANT, runId, 'user asked');
      assert.equal(cancelled?.status, 'cancelled');
      await until(() => h.worker.activeRuns === 0, 1000);
      assert.ok(Date.now() - cancelledAt < 500, 'the loop ended promptly');
      assert.equal(h.model.aborted, 1, 'the in-flight model call was aborted');

      const run = await h.wait(runId);
      assert.equal(run.status, 'cancelled');
      assert.equal(run.output, null);
      assert.equal(run.error?.code, 'CANCELLED');
      assert.deepEqual(
        (await h.store.loadEntries(runId)).map((entry) => entry.kind),
        ['user'],
      );
      assert.equal(await h.store.getThread(TENANT, 'a', 's'), null);
      const deliveries = await h.store.listDeliveries(TENANT, { run_id: runId }, 10);
      assert.equal(deliveries.items.length, 0);
      const trace = types(await h.trace(runId));
      assert.equal(trace[trace.length - 1], 'run.cancelled');
      assert.ok(!trace.includes('model.response'));
    } finally {
      await h.close();
    }
  });

  it('respects the concurrency limit', async () => {
    const h = await openHarness({ concurrency: 2 });
    try {
      const ids = [];
      for (let i = 0; i < 5; i++) ids.push(await h.submit('@sleep 120', { scope: `c${i}` }));
      for (const id of ids) assert.equal((await h.wait(id)).status, 'succeeded');
      assert.equal(h.model.maxInFlight, 2);
    } finally {
      await h.close();
    }
  });

  it("its own finalize stops nothing: a finished run's signals stay unaborted", async () => {
    const h = await openHarness();
    try {
      const id = await h.submit('what time is it?\n@call clock_now {}');
      assert.equal((await h.wait(id)).status, 'succeeded');
      await until(() => h.worker.activeRuns === 0);
      await setImmediate();
      assert.equal(h.model.requests.length, 2);
      // The run's own `run.terminal` used to stop its control as if cancelled: every
      // signal of the attempt aborted, each listener left on them dispatched (CPU only).
      assert.deepEqual(
        h.model.requests.map((request) => request.signal.aborted),
        [false, false],
      );
    } finally {
      await h.close();
    }
  });

  it('a wake while every slot is busy does not stop later claims', async () => {
    // Regression: a claim round that ended without awaiting (all slots busy) left a
    // settled promise behind and the worker never claimed again.
    const h = await openHarness({ concurrency: 1, pollMs: 60_000 });
    try {
      const first = await h.submit('@sleep 150', { scope: 'busy-1' });
      await until(async () => (await status(h.store, first)) === 'running');
      h.worker.wake();
      h.worker.wake();
      // The wake's claim round runs in the next check phase and ends at once (every slot
      // is busy): one setImmediate later it is over, with no clock involved.
      await setImmediate();
      const second = await h.submit('after the busy wake', { scope: 'busy-2' });
      assert.equal((await h.wait(first, 5000)).status, 'succeeded');
      assert.equal((await h.wait(second, 5000)).status, 'succeeded');
    } finally {
      await h.close();
    }
  });

  it('FIFO within a scope, different scopes in parallel (from run timestamps)', async () => {
    const h = await openHarness({ concurrency: 4 });
    try {
      const lanes: Record<string, string[]> = { A: [], B: [] };
      for (let i = 0; i < 3; i++) {
        for (const scope of ['A', 'B']) {
          lanes[scope]?.push(await h.submit(`@sleep 80\n${scope}${i}`, { scope }));
        }
      }
      const runs: Record<string, Run[]> = { A: [], B: [] };
      for (const scope of ['A', 'B']) {
        for (const id of lanes[scope] ?? []) runs[scope]?.push(await h.wait(id));
      }
      for (const scope of ['A', 'B']) {
        const list = runs[scope] ?? [];
        for (let i = 1; i < list.length; i++) {
          const previous = list[i - 1] as Run;
          const current = list[i] as Run;
          // In submission order, and never overlapping.
          assert.ok(ms(current.started_at) >= ms(previous.finished_at), `${scope} overlaps`);
        }
      }
      const a0 = runs.A?.[0] as Run;
      const b0 = runs.B?.[0] as Run;
      assert.ok(
        ms(a0.started_at) < ms(b0.finished_at) && ms(b0.started_at) < ms(a0.finished_at),
        'the two scopes ran in parallel',
      );
    } finally {
      await h.close();
    }
  });

  it('deleting the agent fails its runs AGENT_NOT_FOUND and frees the lane', async () => {
    const h = await openHarness();
    try {
      await h.putAgent('gone');
      const running = await h.submit('@sleep 5000', { agent: 'gone', scope: 'L' });
      const queued = await h.submit('next', { agent: 'gone', scope: 'L' });
      await until(() => h.model.inFlight === 1);
      assert.equal(await h.store.deleteAgent(TENANT, 'gone'), true);
      for (const id of [running, queued]) {
        const run = await h.wait(id);
        assert.equal(run.status, 'failed');
        assert.equal(run.error?.code, 'AGENT_NOT_FOUND');
      }
      await until(() => h.worker.activeRuns === 0, 1000);
      assert.equal(h.model.aborted, 1);
      await h.putAgent('gone');
      const again = await h.wait(await h.submit('back', { agent: 'gone', scope: 'L' }));
      assert.equal(again.status, 'succeeded');
    } finally {
      await h.close();
    }
  });

  it('a claim whose agent snapshot is null is finalized AGENT_NOT_FOUND', async () => {
    const h = await openHarness({ idle: true });
    try {
      const runId = await h.submit('hi');
      const claimed = await h.store.claimNextRun({ owner: 'test', lease_ms: 30_000 });
      assert.ok(claimed);
      // What the worker does with a null snapshot (the agent vanished between enqueue and claim).
      await h.store.heartbeat({ run_id: runId, attempt: 1 }, 0);
      const store = new Proxy(h.store, {
        get(target, key, receiver) {
          if (key === 'claimNextRun') {
            return async (options: Parameters<Store['claimNextRun']>[0]) => {
              const next = await target.claimNextRun(options);
              return next && { ...next, agent: null };
            };
          }
          const value = Reflect.get(target, key, receiver) as unknown;
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const worker = createWorker({
        store,
        providers: createProviderRegistry(),
        logger: silent,
        metrics: h.metrics,
        failpoints: inertFailpoints,
        concurrency: 1,
        leaseMs: 30_000,
      });
      worker.start();
      const run = await h.wait(runId);
      await worker.stop();
      assert.equal(run.status, 'failed');
      assert.equal(run.error?.code, 'AGENT_NOT_FOUND');
      assert.equal(run.attempt, 2);
    } finally {
      await h.close();
    }
  });

  it('fencing: a lost lease aborts the loop and the stale finalize is rejected', async () => {
    const h = await openHarness({ leaseMs: 150, pollMs: 60_000 });
    try {
      const runId = await h.submit('@sleep 3000\nslow');
      await until(() => h.model.inFlight === 1);
      // Another worker takes the run over (its lease expired meanwhile). The holder's
      // heartbeat (every 50 ms) may extend the lease between the expiry and the claim
      // on a loaded machine: expire again until the claim wins.
      const takeOver = async () => {
        await h.store.expireAllLeases();
        return h.store.claimNextRun({ owner: 'thief', lease_ms: 60_000 });
      };
      let thief = await takeOver();
      for (let tries = 1; !thief && tries < 100; tries++) thief = await takeOver();
      assert.equal(thief?.run.attempt, 2);
      // The heartbeat (every lease_ms/3) finds the lease gone and aborts the call.
      await until(() => h.worker.activeRuns === 0, 1000);
      assert.equal(h.model.aborted, 1);
      assert.equal(await status(h.store, runId), 'running');

      const stale = await finalizeRun(
        h.store,
        silent,
        { run_id: runId, attempt: 1 },
        {
          status: 'failed',
          error: { code: 'INTERNAL', message: 'stale' },
          steps: 0,
          usage: emptyUsage(),
          elapsed_ms: 0,
        },
      );
      assert.equal(stale, null, 'the stale attempt may not finalize');
      await assert.rejects(
        h.store.appendProgress({ run_id: runId, attempt: 1 }, { events: [] }),
        /LEASE_LOST|no longer holds/,
      );
      const current = await finalizeRun(
        h.store,
        silent,
        { run_id: runId, attempt: 2 },
        {
          status: 'failed',
          error: { code: 'INTERNAL', message: 'thief' },
          steps: 0,
          usage: emptyUsage(),
          elapsed_ms: 0,
        },
      );
      assert.equal(current?.status, 'failed');
      const entries = await h.store.loadEntries(runId);
      assert.deepEqual(
        entries.map((entry) => [entry.kind, entry.attempt]),
        [['user', 1]],
      );
    } finally {
      await h.close();
    }
  });

  it('resume: recorded responses are not requested again; run.resumed is traced', async () => {
    const h = await openHarness({ idle: true });
    try {
      const runId = await h.submit(
        '@call clock_now {}\n@call calc_eval {"expression":"1"}\nresume',
      );
      const first = await h.store.claimNextRun({ owner: 'crashed', lease_ms: 30_000 });
      assert.ok(first);
      const fence = { run_id: runId, attempt: 1 };
      // What the crashed attempt had recorded: the user entry and step 1's response.
      await h.store.appendProgress(fence, {
        entries: [
          {
            kind: 'user',
            body: { text: first.run.input.text as string, payload: first.run.input },
          },
          {
            kind: 'assistant',
            body: {
              text: '',
              tool_calls: [{ call_id: 'call_1_1', name: 'clock_now', arguments: '{}' }],
              usage: { input_tokens: 10, output_tokens: 5 },
              finish_reason: 'tool_calls',
              model: 'fixture/echo',
            },
          },
        ],
        steps: 1,
        usage: { input_tokens: 10, output_tokens: 5, model_calls: 1, tool_calls: 0 },
        elapsed_ms: 40,
      });
      await h.store.expireAllLeases();
      h.worker.start();
      const run = await h.wait(runId);
      assert.equal(run.status, 'succeeded');
      assert.equal(run.attempt, 2);
      assert.equal(run.steps, 3);
      assert.equal(run.usage.model_calls, 3);
      // Step 1 came from the checkpoint: only steps 2 and 3 were requested.
      assert.equal(h.model.requests.length, 2);
      const kinds = (await h.store.loadEntries(runId)).map((entry) => entry.kind);
      assert.deepEqual(kinds, [
        'user',
        'assistant',
        'tool_result',
        'assistant',
        'tool_result',
        'assistant',
      ]);
      const resumed = (await h.trace(runId)).find((event) => event.type === 'run.resumed');
      assert.deepEqual(resumed?.data, {
        attempt: 2,
        entries_loaded: 2,
        steps: 1,
        rerun_calls: [],
        uncertain_calls: [],
        crashed_calls: [],
        // The call's tool.call was never recorded: it had not started, so it just runs.
        not_started_calls: ['call_1_1'],
      });
      assert.equal(await h.metrics.leaseReclaims.get().then((m) => m.values[0]?.value), 1);
    } finally {
      await h.close();
    }
  });

  it('stop(): interrupts a model call at once and releases the lease', async () => {
    const h = await openHarness();
    const runId = await h.submit('@sleep 5000\nlong');
    await until(() => h.model.inFlight === 1);
    const stopping = Date.now();
    await h.worker.stop({ graceMs: 5000 });
    assert.ok(Date.now() - stopping < 1000, 'a model call does not wait for the grace');
    assert.equal(await status(h.store, runId), 'running');
    // Released: another claimer gets it at once, without any lease expiry.
    const next = await h.store.claimNextRun({ owner: 'next', lease_ms: 1000 });
    assert.equal(next?.run.run_id, runId);
    assert.equal(next?.run.attempt, 2);
    await h.close();
  });
});
