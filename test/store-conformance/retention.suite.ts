// Retention against the Store interface (docs/store.md, "Retention"): a finished run past
// the cutoff loses its trace events and journal entries, keeps its row, output, thread
// and memory; queued, running and waiting runs keep everything; a batch deletes at most
// its limit; whole runs go only once their journal is gone and every delivery of them
// was delivered, and a replayed request_id finds its run until then.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type {
  PruneResult,
  RetentionPart,
  RetentionCursor,
} from '../../src/store/rules/retention.ts';
import type { Store } from '../../src/store/store.ts';
import type { StoreFactory } from './harness.ts';
import { AGENT, claimOrFail, fenceOf, StoreHarness, succeeded, TENANT, turn } from './harness.ts';

const DAY = 86_400_000;

/** A run through claim, `steps` checkpoints (an entry and an event each) and success. */
async function finishedRun(
  store: Store,
  options: { scope?: string; steps?: number; destination?: string; request_id?: string } = {},
): Promise<string> {
  await store.enqueueRun(
    turn({
      scope: options.scope ?? 's1',
      request_id: options.request_id ?? null,
      delivery: options.destination ? { destination: options.destination } : null,
    }),
  );
  const claimed = await claimOrFail(store);
  for (let step = 0; step < (options.steps ?? 2); step += 1) {
    await store.appendProgress(fenceOf(claimed), {
      entries: [{ kind: 'note', body: { text: `step ${step}` } }],
      events: [{ type: 'run.note', data: { step } }],
    });
  }
  await store.finalizeRun(fenceOf(claimed), succeeded(`reply ${options.scope ?? 's1'}`));
  return claimed.run.run_id;
}

async function journalOf(
  store: Store,
  runId: string,
): Promise<{ entries: number; events: number }> {
  const events = (await store.getTrace(TENANT, runId, 0, 1000)) ?? [];
  return { entries: (await store.loadEntries(runId)).length, events: events.length };
}

/** Batches until the walk ends, as the pruner does; returns every batch's result. */
async function pruneAll(
  store: Store,
  part: RetentionPart,
  olderThanMs: number,
  limit: number,
): Promise<PruneResult[]> {
  const results: PruneResult[] = [];
  let after: RetentionCursor | null = null;
  for (let guard = 0; guard < 1000; guard += 1) {
    const result = await store.pruneRunHistory({ part, older_than_ms: olderThanMs, limit, after });
    results.push(result);
    after = result.last;
    if (!result.more) return results;
  }
  throw new Error('the walk did not end');
}

const deletedBy = (results: PruneResult[]): number =>
  results.reduce((sum, result) => sum + result.deleted, 0);

export function retentionSuite(factory: StoreFactory): void {
  describe('retention', () => {
    const harness = new StoreHarness(factory);

    it('a finished run past the cutoff loses its events and entries; its output, thread and memory stay', async () => {
      const { store, clock } = await harness.fresh();
      const old = await finishedRun(store, { scope: 'old', steps: 3 });
      await store.putMemory({
        tenant: TENANT,
        namespace: 'n',
        id: 'f1',
        text: 'kept fact',
        metadata: {},
        vector: { embedder: 'e1', values: Float32Array.from([1, 0]) },
      });
      clock.advance(2 * DAY);
      const recent = await finishedRun(store, { scope: 'recent', steps: 3 });
      const before = await journalOf(store, old);
      assert.ok(before.entries >= 3 && before.events >= 3, JSON.stringify(before));

      const events = await pruneAll(store, 'events', DAY, 100);
      const entries = await pruneAll(store, 'entries', DAY, 100);
      assert.equal(deletedBy(events), before.events);
      assert.equal(deletedBy(entries), before.entries);
      assert.deepEqual(await journalOf(store, old), { entries: 0, events: 0 });

      const run = await store.getRun(TENANT, old);
      assert.equal(run?.status, 'succeeded');
      assert.deepEqual(run?.output, { reply: 'reply old' });
      const thread = await store.getThread(TENANT, AGENT, 'old');
      assert.ok(thread, 'the thread stays');
      assert.ok(JSON.stringify(thread.messages).includes('reply old'));
      assert.equal((await store.getMemory(TENANT, 'n', 'f1'))?.text, 'kept fact');
      // The run that finished within the age keeps everything.
      const kept = await journalOf(store, recent);
      assert.ok(kept.entries >= 3 && kept.events >= 3, JSON.stringify(kept));
      // A second pass finds nothing more.
      assert.equal(deletedBy(await pruneAll(store, 'events', DAY, 100)), 0);
    });

    it('queued, running and waiting runs keep their whole journal however old', async () => {
      const { store, clock } = await harness.fresh();
      await store.enqueueRun(turn({ scope: 'running' }));
      const running = await claimOrFail(store);
      await store.appendProgress(fenceOf(running), {
        entries: [{ kind: 'note', body: { text: 'in flight' } }],
        events: [{ type: 'run.note', data: {} }],
      });
      await store.enqueueRun(turn({ scope: 'waiting' }));
      const waiting = await claimOrFail(store);
      await store.appendProgress(fenceOf(waiting), {
        entries: [{ kind: 'note', body: { text: 'before approval' } }],
      });
      await store.requestApproval(fenceOf(waiting), {
        step: 1,
        call: { call_id: 'c1', name: 'sink_write', arguments: '{}' },
        timeout_ms: null,
      });
      const queued = (await store.enqueueRun(turn({ scope: 'queued' }))).run.run_id;
      const before = await Promise.all(
        [running.run.run_id, waiting.run.run_id, queued].map((id) => journalOf(store, id)),
      );
      clock.advance(400 * DAY);
      for (const part of ['events', 'entries', 'runs'] as const) {
        assert.equal(deletedBy(await pruneAll(store, part, DAY, 100)), 0, part);
      }
      const after = await Promise.all(
        [running.run.run_id, waiting.run.run_id, queued].map((id) => journalOf(store, id)),
      );
      assert.deepEqual(after, before);
      assert.equal((await store.getRun(TENANT, waiting.run.run_id))?.status, 'waiting');
      assert.equal((await store.listRunApprovals(TENANT, waiting.run.run_id))?.length, 1);
    });

    it('a batch deletes at most its limit, and the walk resumes where it stopped', async () => {
      const { store, clock } = await harness.fresh();
      const runs: string[] = [];
      // 5 runs of 8 checkpoints: each has more entries than one batch deletes.
      for (let index = 0; index < 5; index += 1) {
        runs.push(await finishedRun(store, { scope: `s${index}`, steps: 8 }));
      }
      const total = (await Promise.all(runs.map((id) => journalOf(store, id)))).reduce(
        (sum, journal) => sum + journal.entries,
        0,
      );
      clock.advance(2 * DAY);
      const results = await pruneAll(store, 'entries', DAY, 3);
      assert.ok(
        results.every((result) => result.deleted <= 3),
        results.map((result) => result.deleted).join(','),
      );
      assert.equal(deletedBy(results), total);
      assert.ok(results.length >= Math.ceil(total / 3), `${results.length} batches`);
      for (const id of runs) assert.equal((await journalOf(store, id)).entries, 0);
    });

    it('whole runs go after their journal, never with a delivery still to deliver; request_id replays hold until then', async () => {
      const { store, clock } = await harness.fresh();
      const plain = await finishedRun(store, { scope: 'p', request_id: 'req-plain' });
      const pending = await finishedRun(store, { scope: 'd1', destination: 'tg:1' });
      const delivered = await finishedRun(store, { scope: 'd2', destination: 'tg:2' });
      const [claimedOne, claimedTwo] = await store.claimDeliveries(TENANT, {
        limit: 10,
        lease_ms: 60_000,
        max_attempts: 10,
      });
      const toAck = [claimedOne, claimedTwo].find((claim) => claim?.run_id === delivered);
      assert.ok(toAck);
      await store.ackDelivery(TENANT, toAck.delivery_id, {
        claim_token: toAck.claim_token,
        outcome: 'delivered',
        max_attempts: 10,
      });
      clock.advance(2 * DAY);
      // The journal is still there: no run goes yet.
      assert.equal(deletedBy(await pruneAll(store, 'runs', DAY, 100)), 0);
      // A replay finds the run while its row stays.
      const replay = await store.enqueueRun(turn({ scope: 'p', request_id: 'req-plain' }));
      assert.equal(replay.run.run_id, plain);

      await pruneAll(store, 'events', DAY, 100);
      await pruneAll(store, 'entries', DAY, 100);
      assert.equal(deletedBy(await pruneAll(store, 'runs', DAY, 100)), 2);
      assert.equal(await store.getRun(TENANT, plain), null);
      assert.equal(await store.getRun(TENANT, delivered), null);
      assert.equal((await store.getRun(TENANT, pending))?.status, 'succeeded');
      // The thread outlives its runs.
      assert.ok(await store.getThread(TENANT, AGENT, 'p'));
    });
  });
}
