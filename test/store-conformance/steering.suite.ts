// Steered turns, interrupts and forks through the Store interface (docs/agent-loop.md):
// both backends take a steered turn once (fenced), leave an untaken one as the lane's
// next run, cancel an interrupted run in the enqueue's transaction, and fork a journal
// prefix exactly.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newRunId } from '../../src/ids.ts';
import type { PendingSteer } from '../../src/store/store.ts';
import type { EntryBody } from '../../src/types.ts';
import type { StoreFactory } from './harness.ts';
import {
  claimOrFail,
  fenceOf,
  rejectsWith,
  StoreHarness,
  succeeded,
  TENANT,
  turn,
  usage,
} from './harness.ts';

const asEntry = (steer: PendingSteer): EntryBody => ({
  kind: 'user',
  body: { text: String(steer.input.text), payload: steer.input, steer_id: steer.steer_id },
});

function assistant(calls: string[]): EntryBody {
  return {
    kind: 'assistant',
    body: {
      text: calls.length ? '' : 'done',
      tool_calls: calls.map((call_id) => ({ call_id, name: 'clock_now', arguments: '{}' })),
      usage: { input_tokens: 3, output_tokens: 2 },
      finish_reason: calls.length ? 'tool_calls' : 'stop',
      model: 'fixture/echo',
    },
  };
}

function result(callId: string): EntryBody {
  return {
    kind: 'tool_result',
    body: { call_id: callId, name: 'clock_now', ok: true, result: { t: 1 }, duration_ms: 1 },
  };
}

export function steeringSuite(factory: StoreFactory): void {
  describe('steering and forks', () => {
    const harness = new StoreHarness(factory);

    it('a steered turn is taken once, fenced, and its request_id replays to the run', async () => {
      const { store } = await harness.fresh();
      await store.enqueueRun(turn());
      const claimed = await claimOrFail(store);
      const steer = await store.enqueueRun(
        turn({ on_busy: 'steer', request_id: 'r-1', input: { text: 'actually Tuesday' } }),
      );
      assert.equal(steer.run.run_id, claimed.run.run_id);
      assert.ok(steer.steer_id);
      const stale = { run_id: claimed.run.run_id, attempt: claimed.run.attempt + 1 };
      await rejectsWith(store.takeSteers(stale, asEntry), 'LEASE_LOST');
      const taken = await store.takeSteers(fenceOf(claimed), asEntry);
      assert.equal(taken.length, 1);
      assert.equal(taken[0]?.kind === 'user' && taken[0].body.steer_id, steer.steer_id);
      assert.deepEqual(await store.takeSteers(fenceOf(claimed), asEntry), []);
      assert.equal(await store.getRun(TENANT, steer.steer_id as string), null);
      const replay = await store.enqueueRun(
        turn({ on_busy: 'steer', request_id: 'r-1', input: { text: 'actually Tuesday' } }),
      );
      assert.equal(replay.deduplicated, true);
      assert.equal(replay.run.run_id, claimed.run.run_id);
      assert.equal(replay.steer_id, steer.steer_id);
      await store.finalizeRun(fenceOf(claimed), succeeded('ok'));
      assert.equal(await store.claimNextRun({ owner: 'w1', lease_ms: 1000 }), null);
    });

    it('a steered turn not taken before the run ends is the next run of the lane', async () => {
      const { store } = await harness.fresh();
      await store.enqueueRun(turn());
      const claimed = await claimOrFail(store);
      const steer = await store.enqueueRun(turn({ on_busy: 'steer', request_id: 'r-2' }));
      await store.finalizeRun(fenceOf(claimed), succeeded('ok'));
      const replay = await store.enqueueRun(turn({ on_busy: 'steer', request_id: 'r-2' }));
      assert.equal(replay.run.run_id, steer.steer_id, 'its own run once the target ended');
      assert.equal(replay.steer_id, undefined);
      const next = await claimOrFail(store);
      assert.equal(next.run.run_id, steer.steer_id);
    });

    it('interrupt cancels the running run in the same transaction', async () => {
      const { store } = await harness.fresh();
      await store.enqueueRun(turn());
      const claimed = await claimOrFail(store);
      const interrupting = await store.enqueueRun(turn({ on_busy: 'interrupt' }));
      const cancelled = await store.getRun(TENANT, claimed.run.run_id);
      assert.equal(cancelled?.status, 'cancelled');
      assert.match(cancelled?.error?.message ?? '', new RegExp(interrupting.run.run_id));
      await rejectsWith(store.appendProgress(fenceOf(claimed), { steps: 1 }), 'LEASE_LOST');
      assert.equal((await claimOrFail(store)).run.run_id, interrupting.run.run_id);
    });

    it('a fork copies the journal prefix exactly and checks the fork point', async () => {
      const { store } = await harness.fresh();
      const { run } = await store.enqueueRun(turn());
      const claimed = await claimOrFail(store);
      const source = await store.appendProgress(fenceOf(claimed), {
        entries: [
          { kind: 'user', body: { text: 'hello', payload: { text: 'hello' } } },
          assistant(['c1']),
          result('c1'),
          assistant(['c2']),
        ],
        steps: 2,
        usage: usage(2),
      });
      const fork = (at_step: number, extra: { tenant?: string; source?: string } = {}) =>
        store.forkRun({
          tenant: extra.tenant ?? TENANT,
          source_run_id: extra.source ?? run.run_id,
          run_id: newRunId(),
          at_step,
          payload: null,
          scope: 'forked',
          user_entry: null,
          fingerprint: 'f',
        });
      await rejectsWith(fork(2), 'VALIDATION_FAILED'); // step 2's call has no result
      await rejectsWith(fork(3), 'VALIDATION_FAILED');
      await rejectsWith(fork(1, { tenant: 'other' }), 'RUN_NOT_FOUND');
      await rejectsWith(fork(1, { source: newRunId() }), 'RUN_NOT_FOUND');
      const forked = await fork(1);
      assert.equal(forked.status, 'queued');
      assert.equal(forked.scope, 'forked');
      const copy = await store.loadEntries(forked.run_id);
      assert.deepEqual(
        copy.map(({ seq, kind, body, ts }) => ({ seq, kind, body, ts })),
        source.slice(0, 3).map(({ seq, kind, body, ts }) => ({ seq, kind, body, ts })),
      );
      assert.ok(copy.every((entry) => entry.attempt === 0));
      const trace = await store.getTrace(TENANT, forked.run_id, 0, 10);
      const queued = trace?.[0];
      assert.equal(queued?.type, 'run.queued');
      assert.equal(queued.data.forked_from, run.run_id);

      const replaced = await store.forkRun({
        tenant: TENANT,
        source_run_id: run.run_id,
        run_id: newRunId(),
        at_step: 0,
        payload: { text: 'what if' },
        scope: 'what-if',
        user_entry: { kind: 'user', body: { text: 'what if', payload: { text: 'what if' } } },
        fingerprint: 'g',
      });
      assert.deepEqual(replaced.input, { text: 'what if' });
      const replacedEntries = await store.loadEntries(replaced.run_id);
      assert.equal(replacedEntries.length, 1);
      assert.deepEqual(replacedEntries[0]?.body, { text: 'what if', payload: { text: 'what if' } });
    });

    it('a fork dedups by request_id and counts against the queued-run quota, like a turn', async () => {
      const { store } = await harness.fresh();
      const { run } = await store.enqueueRun(turn());
      const claimed = await claimOrFail(store);
      await store.appendProgress(fenceOf(claimed), {
        entries: [{ kind: 'user', body: { text: 'hello', payload: { text: 'hello' } } }],
        steps: 0,
        usage: usage(0),
      });
      const fork = (requestId: string | null, fingerprint: string, maxQueued: number | null) =>
        store.forkRun({
          tenant: TENANT,
          source_run_id: run.run_id,
          run_id: newRunId(),
          at_step: 0,
          payload: null,
          scope: `forked-${fingerprint}`,
          user_entry: null,
          fingerprint,
          request_id: requestId,
          max_queued: maxQueued,
        });
      const first = await fork('fork-1', 'f', 2);
      const replay = await fork('fork-1', 'f', 2);
      assert.equal(replay.run_id, first.run_id, 'a replay answers the first fork');
      await rejectsWith(fork('fork-1', 'other', 2), 'IDEMPOTENCY_KEY_REUSED');
      // A request_id a turn used is not a fork's.
      await store.enqueueRun(turn({ scope: 's9', request_id: 'turn-1' }));
      await rejectsWith(fork('turn-1', 'f', null), 'IDEMPOTENCY_KEY_REUSED');
      // Two queued runs now (the first fork and the turn): a quota of 2 refuses a third.
      await rejectsWith(fork(null, 'g', 2), 'RATE_LIMITED');
      await rejectsWith(fork('fork-2', 'g', 2), 'RATE_LIMITED');
      const queued = await store.listRuns(TENANT, { status: 'queued' }, 10);
      assert.equal(queued.items.length, 2, 'a refused fork wrote nothing');
      // The replay of an existing fork is answered even with the queue full.
      assert.equal((await fork('fork-1', 'f', 2)).run_id, first.run_id);
      assert.equal((await fork(null, 'g', 3)).status, 'queued');
    });
  });
}
