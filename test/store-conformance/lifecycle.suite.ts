// Fencing, checkpoint entries, the one finalization transaction, cancellation and its
// races with finalization, and lane release on every way a run can end.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClaimedRun, Store } from '../../src/store/store.ts';
import { newRunId } from '../../src/ids.ts';
import type { StoreFactory, TestClock } from './harness.ts';
import {
  AGENT,
  agentSpec,
  claimOrFail,
  failed,
  fenceOf,
  LEASE_MS,
  rejectsWith,
  StoreHarness,
  succeeded,
  TENANT,
  turn,
  usage,
} from './harness.ts';

/** A run claimed at attempt 1 whose lease expired and that is now held by attempt 2. */
export async function staleAndCurrent(
  store: Store,
  clock: TestClock,
): Promise<{ stale: ClaimedRun; current: ClaimedRun }> {
  await store.enqueueRun(turn({ delivery: { destination: 'tg:1' } }));
  const stale = await claimOrFail(store, 'old-worker');
  await store.appendProgress(fenceOf(stale), {
    entries: [{ kind: 'note', body: { text: 'first attempt' } }],
  });
  clock.advance(LEASE_MS + 1);
  const current = await claimOrFail(store, 'new-worker');
  return { stale, current };
}

export function fencingSuite(factory: StoreFactory): void {
  describe('fencing and entries', () => {
    const harness = new StoreHarness(factory);

    it('a stale attempt cannot heartbeat, append or finalize, and writes nothing', async () => {
      const { store, clock } = await harness.fresh();
      const { stale, current } = await staleAndCurrent(store, clock);
      const runId = stale.run.run_id;
      assert.equal(current.run.attempt, stale.run.attempt + 1);
      const entriesBefore = await store.loadEntries(runId);
      const traceBefore = await store.getTrace(TENANT, runId, 0, 1000);
      assert.equal(await store.heartbeat(fenceOf(stale), LEASE_MS), false);
      await rejectsWith(
        store.appendProgress(fenceOf(stale), {
          entries: [{ kind: 'note', body: { text: 'stale' } }],
          events: [{ type: 'run.note', data: { text: 'stale' } }],
          steps: 99,
        }),
        'LEASE_LOST',
      );
      await rejectsWith(store.finalizeRun(fenceOf(stale), succeeded('stale')), 'LEASE_LOST');
      assert.deepEqual(await store.loadEntries(runId), entriesBefore);
      assert.deepEqual(await store.getTrace(TENANT, runId, 0, 1000), traceBefore);
      const run = await store.getRun(TENANT, runId);
      assert.equal(run?.status, 'running');
      assert.equal(run?.attempt, current.run.attempt);
      assert.equal(run?.output, null);
      assert.equal(run?.steps, 0);
      assert.equal(await store.getThread(TENANT, AGENT, 's1'), null);
      assert.equal((await store.listDeliveries(TENANT, {}, 10)).items.length, 0);
      // The current attempt is unaffected.
      assert.equal(await store.heartbeat(fenceOf(current), LEASE_MS), true);
      const done = await store.finalizeRun(fenceOf(current), succeeded('current'));
      assert.deepEqual(done.output, { reply: 'current' });
    });

    it('entries and events append in order, seqs continue, progress fields are stored', async () => {
      const { store, clock } = await harness.fresh();
      const { run } = await store.enqueueRun(turn());
      const first = await claimOrFail(store);
      await store.appendProgress(fenceOf(first), {
        entries: [
          { kind: 'user', body: { text: 'hello', payload: { text: 'hello' } } },
          {
            kind: 'assistant',
            body: {
              text: '',
              tool_calls: [{ call_id: 'c1', name: 'clock_now', arguments: '{}' }],
              usage: { input_tokens: 3, output_tokens: 2 },
              finish_reason: 'tool_calls',
              model: 'fixture/echo',
            },
          },
        ],
        // An event's raw JSON text is stored as data.raw as it is (a model response's
        // raw request goes in as it was sent).
        events: [
          {
            type: 'model.response',
            data: { step: 1 },
            raw_json: '{"request":{"model":"m",  "n":1.0}}',
          },
        ],
        steps: 1,
        usage: usage(1),
        elapsed_ms: 250,
      });
      clock.advance(LEASE_MS);
      const second = await claimOrFail(store);
      assert.equal(second.elapsed_ms, 250);
      await store.appendProgress(fenceOf(second), {
        entries: [
          {
            kind: 'tool_result',
            body: { call_id: 'c1', name: 'clock_now', ok: true, result: 'noon', duration_ms: 1 },
          },
        ],
        events: [
          { type: 'run.resumed', data: { attempt: 2 } },
          { type: 'tool.result', data: { call_id: 'c1' } },
        ],
        steps: 2,
        usage: usage(2),
      });
      const entries = await store.loadEntries(run.run_id);
      assert.deepEqual(
        entries.map((entry) => [entry.seq, entry.kind, entry.attempt]),
        [
          [1, 'user', 1],
          [2, 'assistant', 1],
          [3, 'tool_result', 2],
        ],
      );
      assert.deepEqual(entries[2]?.body, {
        call_id: 'c1',
        name: 'clock_now',
        ok: true,
        result: 'noon',
        duration_ms: 1,
      });
      const trace = await store.getTrace(TENANT, run.run_id, 0, 1000);
      assert.deepEqual(trace?.[2]?.data, { step: 1, raw: { request: { model: 'm', n: 1 } } });
      assert.deepEqual(
        trace?.map((event) => `${event.seq}:${event.type}`),
        [
          '1:run.queued',
          '2:run.claimed',
          '3:model.response',
          '4:run.claimed',
          '5:run.resumed',
          '6:tool.result',
        ],
      );
      assert.deepEqual(
        (await store.getTrace(TENANT, run.run_id, 4, 1))?.map((event) => event.seq),
        [5],
      );
      assert.equal(await store.getTrace('nobody', run.run_id, 0, 10), null);
      assert.equal(await store.getTrace(TENANT, 'no-such-run', 0, 10), null);
      const stored = await store.getRun(TENANT, run.run_id);
      assert.equal(stored?.steps, 2);
      assert.deepEqual(stored?.usage, usage(2));
    });

    it('a page of entries reads seq > after in order, one page only, for the tenant only', async () => {
      const { store } = await harness.fresh();
      const { run } = await store.enqueueRun(turn());
      const claimed = await claimOrFail(store);
      await store.appendProgress(fenceOf(claimed), {
        entries: Array.from({ length: 7 }, (_, index) => ({
          kind: 'user' as const,
          body: { text: `m${index + 1}`, payload: { text: `m${index + 1}` } },
        })),
      });
      const seqs = (page: { items: { seq: number }[] } | null) =>
        page?.items.map((entry) => entry.seq);
      const first = await store.getEntriesPage(TENANT, run.run_id, 0, 3);
      assert.deepEqual(seqs(first), [1, 2, 3]);
      assert.equal(first?.next_after, 3);
      assert.deepEqual(first?.items[0]?.body, { text: 'm1', payload: { text: 'm1' } });
      const second = await store.getEntriesPage(TENANT, run.run_id, 3, 3);
      assert.deepEqual(seqs(second), [4, 5, 6]);
      assert.equal(second?.next_after, 6);
      const last = await store.getEntriesPage(TENANT, run.run_id, 6, 3);
      assert.deepEqual(seqs(last), [7]);
      assert.equal(last?.next_after, null);
      // A page that ends exactly at the last entry says so (no empty page follows).
      assert.equal((await store.getEntriesPage(TENANT, run.run_id, 4, 3))?.next_after, null);
      assert.deepEqual(seqs(await store.getEntriesPage(TENANT, run.run_id, 7, 3)), []);
      assert.equal(await store.getEntriesPage('nobody', run.run_id, 0, 3), null);
      assert.equal(await store.getEntriesPage(TENANT, 'no-such-run', 0, 3), null);
    });

    it('appendProgress returns its entries exactly as stored, each write with its own time', async () => {
      const { store, clock } = await harness.fresh();
      const { run } = await store.enqueueRun(turn());
      const fence = fenceOf(await claimOrFail(store));
      const note = (text: string) => ({ kind: 'note' as const, body: { text } });
      // Two writes at one clock reading, then one a millisecond and one a minute later:
      // each returned `ts` is its own write's time, never an earlier write's.
      const returned = [
        ...(await store.appendProgress(fence, { entries: [note('a'), note('b')] })),
        ...(await store.appendProgress(fence, { entries: [note('c')] })),
      ];
      clock.advance(1);
      returned.push(...(await store.appendProgress(fence, { entries: [note('d')] })));
      clock.advance(60_000);
      returned.push(...(await store.appendProgress(fence, { entries: [note('e')] })));
      assert.deepEqual(returned, await store.loadEntries(run.run_id));
      const times = returned.map((entry) => Date.parse(entry.ts));
      assert.equal(times[1], times[0]);
      assert.equal(times[2], times[0]);
      assert.equal(times[3], (times[0] as number) + 1);
      assert.equal(times[4], (times[0] as number) + 60_001);
    });
  });
}

export function finalizeSuite(factory: StoreFactory): void {
  describe('finalize', () => {
    const harness = new StoreHarness(factory);

    it('succeeded with a destination: output, terminal event, thread turn and one delivery', async () => {
      const { store } = await harness.fresh();
      await store.enqueueRun(turn({ delivery: { destination: 'tg:42' } }));
      const claimed = await claimOrFail(store);
      const run = await store.finalizeRun(fenceOf(claimed), succeeded('hi there'));
      assert.equal(run.status, 'succeeded');
      assert.deepEqual(run.output, { reply: 'hi there' });
      assert.equal(run.error, null);
      assert.ok(run.finished_at);
      assert.deepEqual(await store.getRun(TENANT, run.run_id), run);
      const trace = await store.getTrace(TENANT, run.run_id, 0, 100);
      assert.deepEqual(trace?.at(-1)?.type, 'run.succeeded');
      assert.deepEqual(trace?.at(-1)?.data, {
        output: { reply: 'hi there' },
        usage: usage(),
        steps: 1,
      });
      const thread = await store.getThread(TENANT, AGENT, 's1');
      assert.equal(thread?.revision, 1);
      assert.equal(thread?.turns, 1);
      assert.deepEqual(
        thread?.messages.map((message) => [message.role, message.content, message.run_id]),
        [
          ['user', 'hello', run.run_id],
          ['assistant', 'hi there', run.run_id],
        ],
      );
      const deliveries = await store.listDeliveries(TENANT, {}, 10);
      assert.equal(deliveries.items.length, 1);
      assert.equal(deliveries.items[0]?.run_id, run.run_id);
      assert.equal(deliveries.items[0]?.status, 'pending');
      assert.equal(deliveries.items[0]?.destination, 'tg:42');
      assert.equal(deliveries.items[0]?.attempt, 0);
      await rejectsWith(store.finalizeRun(fenceOf(claimed), succeeded('again')), 'LEASE_LOST');
      assert.equal((await store.listDeliveries(TENANT, {}, 10)).items.length, 1);
      assert.equal((await store.getThread(TENANT, AGENT, 's1'))?.turns, 1);
    });

    it('succeeded without a destination writes no delivery; a non-text payload is kept as JSON', async () => {
      const { store } = await harness.fresh();
      await store.enqueueRun(turn({ input: { question: 42 } }));
      const claimed = await claimOrFail(store);
      await store.finalizeRun(fenceOf(claimed), succeeded('forty-two'));
      assert.equal((await store.listDeliveries(TENANT, {}, 10)).items.length, 0);
      const thread = await store.getThread(TENANT, AGENT, 's1');
      assert.deepEqual(JSON.parse(thread?.messages[0]?.content ?? 'null'), { question: 42 });
    });

    it('failed writes the error and terminal event, but no thread turn and no delivery', async () => {
      const { store } = await harness.fresh();
      await store.enqueueRun(turn({ delivery: { destination: 'tg:1' } }));
      const claimed = await claimOrFail(store);
      const run = await store.finalizeRun(fenceOf(claimed), failed('MAX_STEPS_EXCEEDED'));
      assert.equal(run.status, 'failed');
      assert.equal(run.output, null);
      assert.equal(run.error?.code, 'MAX_STEPS_EXCEEDED');
      const trace = await store.getTrace(TENANT, run.run_id, 0, 100);
      assert.equal(trace?.at(-1)?.type, 'run.failed');
      assert.equal(await store.getThread(TENANT, AGENT, 's1'), null);
      assert.equal((await store.listDeliveries(TENANT, {}, 10)).items.length, 0);
    });

    it('the thread keeps the last context_window turns; 0 keeps none but still counts', async () => {
      const { store } = await harness.fresh();
      for (let index = 1; index <= 3; index += 1) {
        await store.enqueueRun(turn({ input: { text: `q${index}` } }));
        const claimed = await claimOrFail(store);
        await store.finalizeRun(fenceOf(claimed), succeeded(`r${index}`, { context_window: 2 }));
      }
      const thread = await store.getThread(TENANT, AGENT, 's1');
      assert.equal(thread?.turns, 3);
      assert.equal(thread?.revision, 3);
      assert.deepEqual(
        thread?.messages.map((message) => message.content),
        ['q2', 'r2', 'q3', 'r3'],
      );
      await store.enqueueRun(turn({ input: { text: 'q4' } }));
      const claimed = await claimOrFail(store);
      await store.finalizeRun(fenceOf(claimed), succeeded('r4', { context_window: 0 }));
      const emptied = await store.getThread(TENANT, AGENT, 's1');
      assert.equal(emptied?.revision, 4);
      assert.equal(emptied?.turns, 4);
      assert.deepEqual(emptied?.messages, []);
    });

    it('threads list newest first with paging, and can be deleted', async () => {
      const { store, clock } = await harness.fresh();
      const scopes = ['x1', 'x2', 'x3', 'x4', 'x5'];
      for (const scope of scopes) {
        clock.advance(10);
        await store.enqueueRun(turn({ scope }));
        await store.finalizeRun(fenceOf(await claimOrFail(store)), succeeded('ok'));
      }
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.listThreads(TENANT, AGENT, 2, cursor);
        assert.ok(page.items.length <= 2);
        seen.push(...page.items.map((item) => item.scope));
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      assert.deepEqual(seen, [...scopes].reverse());
      assert.equal(await store.deleteThread(TENANT, AGENT, 'x3'), true);
      assert.equal(await store.deleteThread(TENANT, AGENT, 'x3'), false);
      assert.equal(await store.getThread(TENANT, AGENT, 'x3'), null);
      assert.equal((await store.listThreads(TENANT, AGENT, 50)).items.length, 4);
    });
  });
}

export function cancelSuite(factory: StoreFactory): void {
  describe('cancel and lane release', () => {
    const harness = new StoreHarness(factory);

    it('cancels a queued run with a reason and a trace event; unknown or foreign runs are null', async () => {
      const { store } = await harness.fresh();
      const { run } = await store.enqueueRun(turn());
      const cancelled = await store.cancelRun(TENANT, run.run_id, 'changed my mind');
      assert.equal(cancelled?.status, 'cancelled');
      assert.deepEqual(cancelled?.error, { code: 'CANCELLED', message: 'changed my mind' });
      assert.ok(cancelled?.finished_at);
      const trace = await store.getTrace(TENANT, run.run_id, 0, 100);
      assert.equal(trace?.at(-1)?.type, 'run.cancelled');
      assert.equal(await store.cancelRun(TENANT, 'no-such-run', null), null);
      await store.createTenant('t2', {});
      assert.equal(await store.cancelRun('t2', run.run_id, null), null);
      assert.equal(await store.claimNextRun({ owner: 'w', lease_ms: LEASE_MS }), null);
      const defaulted = await store.enqueueRun(turn());
      const cancelledDefault = await store.cancelRun(TENANT, defaulted.run.run_id, null);
      assert.equal(cancelledDefault?.error?.code, 'CANCELLED');
      assert.ok((cancelledDefault?.error?.message ?? '').length > 0);
    });

    it('cancel then finalize: LEASE_LOST, and the run stays cancelled with nothing written', async () => {
      const { store } = await harness.fresh();
      await store.enqueueRun(turn({ delivery: { destination: 'tg:1' } }));
      const claimed = await claimOrFail(store);
      const cancelled = await store.cancelRun(TENANT, claimed.run.run_id, null);
      assert.equal(cancelled?.status, 'cancelled');
      assert.equal(await store.heartbeat(fenceOf(claimed), LEASE_MS), false);
      await rejectsWith(store.finalizeRun(fenceOf(claimed), succeeded('late')), 'LEASE_LOST');
      await rejectsWith(
        store.appendProgress(fenceOf(claimed), {
          entries: [{ kind: 'note', body: { text: 'x' } }],
        }),
        'LEASE_LOST',
      );
      const run = await store.getRun(TENANT, claimed.run.run_id);
      assert.equal(run?.status, 'cancelled');
      assert.equal(run?.output, null);
      assert.equal(await store.getThread(TENANT, AGENT, 's1'), null);
      assert.equal((await store.listDeliveries(TENANT, {}, 10)).items.length, 0);
      assert.equal((await store.loadEntries(claimed.run.run_id)).length, 0);
    });

    it('finalize then cancel: the succeeded run is returned unchanged', async () => {
      const { store } = await harness.fresh();
      await store.enqueueRun(turn({ delivery: { destination: 'tg:1' } }));
      const claimed = await claimOrFail(store);
      const done = await store.finalizeRun(fenceOf(claimed), succeeded('first'));
      const afterCancel = await store.cancelRun(TENANT, claimed.run.run_id, 'too late');
      assert.deepEqual(afterCancel, done);
      assert.equal((await store.listDeliveries(TENANT, {}, 10)).items.length, 1);
    });

    it('cancel racing finalize on two connections ends in exactly one consistent outcome', async () => {
      const { store, clock } = await harness.fresh();
      const peer = await harness.peer(store, clock);
      for (let round = 0; round < 20; round += 1) {
        const scope = `race-${round}`;
        await store.enqueueRun(turn({ scope, delivery: { destination: 'tg:1' } }));
        const claimed = await claimOrFail(store);
        const [finalized, cancelled] = await Promise.allSettled([
          store.finalizeRun(fenceOf(claimed), succeeded('won')),
          peer.cancelRun(TENANT, claimed.run.run_id, 'race'),
        ]);
        const run = await store.getRun(TENANT, claimed.run.run_id);
        const deliveries = await store.listDeliveries(TENANT, { run_id: claimed.run.run_id }, 5);
        const thread = await store.getThread(TENANT, AGENT, scope);
        if (run?.status === 'succeeded') {
          assert.equal(finalized.status, 'fulfilled');
          assert.equal(cancelled.status === 'fulfilled' && cancelled.value?.status, 'succeeded');
          assert.equal(deliveries.items.length, 1);
          assert.equal(thread?.turns, 1);
        } else {
          assert.equal(run?.status, 'cancelled');
          assert.equal(finalized.status, 'rejected');
          assert.equal(run?.output, null);
          assert.equal(deliveries.items.length, 0);
          assert.equal(thread, null);
        }
      }
    });

    for (const ending of ['succeeded', 'failed', 'cancelled'] as const) {
      it(`a ${ending} run releases its lane`, async () => {
        const { store } = await harness.fresh();
        await store.enqueueRun(turn());
        const next = await store.enqueueRun(turn());
        const claimed = await claimOrFail(store);
        assert.equal(await store.claimNextRun({ owner: 'w', lease_ms: LEASE_MS }), null);
        if (ending === 'succeeded') await store.finalizeRun(fenceOf(claimed), succeeded('ok'));
        if (ending === 'failed') await store.finalizeRun(fenceOf(claimed), failed());
        if (ending === 'cancelled') await store.cancelRun(TENANT, claimed.run.run_id, null);
        assert.equal((await claimOrFail(store)).run.run_id, next.run.run_id);
      });
    }

    it('deleting an agent ends its runs in run_id order on every backend (events and notifications)', async () => {
      // Enqueued (and so stored) in descending run_id order, one lane each: a backend
      // that announced them in its scan order would answer c, b, a.
      const { store } = await harness.fresh();
      const ids = [newRunId(), newRunId(), newRunId()].sort().reverse();
      for (const [index, runId] of ids.entries())
        await store.enqueueRun(turn({ run_id: runId, scope: `s${index + 1}` }));
      await claimOrFail(store);
      const announced: string[] = [];
      const terminal: string[] = [];
      const unsubscribe = store.subscribe((change) => {
        if (change.kind === 'run.event') announced.push(change.run_id);
        if (change.kind === 'run.terminal') terminal.push(change.run_id);
      });
      assert.equal(await store.deleteAgent(TENANT, AGENT), true);
      await new Promise((resolve) => setImmediate(resolve));
      unsubscribe();
      const ascending = [...ids].sort();
      assert.deepEqual(terminal, ascending);
      assert.deepEqual(announced, ascending);
    });

    it('deleting an agent fails its queued and running runs with AGENT_NOT_FOUND and frees the lanes', async () => {
      const { store } = await harness.fresh();
      await store.putAgent(TENANT, 'other', agentSpec());
      await store.enqueueRun(turn());
      const queued = await store.enqueueRun(turn());
      const otherRun = await store.enqueueRun(turn({ agent: 'other' }));
      const running = await claimOrFail(store);
      assert.equal(running.run.agent, AGENT);
      assert.equal(await store.deleteAgent(TENANT, AGENT), true);
      assert.equal(await store.deleteAgent(TENANT, AGENT), false);
      for (const runId of [running.run.run_id, queued.run.run_id]) {
        const run = await store.getRun(TENANT, runId);
        assert.equal(run?.status, 'failed');
        assert.equal(run?.error?.code, 'AGENT_NOT_FOUND');
        const trace = await store.getTrace(TENANT, runId, 0, 100);
        assert.equal(trace?.at(-1)?.type, 'run.failed');
      }
      await rejectsWith(store.finalizeRun(fenceOf(running), succeeded('late')), 'LEASE_LOST');
      assert.equal((await store.getRun(TENANT, otherRun.run.run_id))?.status, 'queued');
      await rejectsWith(store.enqueueRun(turn()), 'AGENT_NOT_FOUND');
      await store.putAgent(TENANT, AGENT, agentSpec());
      const fresh = await store.enqueueRun(turn());
      const claimedIds = [
        (await claimOrFail(store)).run.run_id,
        (await claimOrFail(store)).run.run_id,
      ];
      assert.deepEqual(claimedIds.sort(), [otherRun.run.run_id, fresh.run.run_id].sort());
    });
  });
}
