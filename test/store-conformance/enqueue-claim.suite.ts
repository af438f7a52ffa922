// Enqueue (idempotency, validation, on_busy) and claim (lanes, FIFO, no starvation,
// racing claimers on separate connections, lease expiry and reclaim).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/store/store.ts';
import type { StoreFactory } from './harness.ts';
import {
  AGENT,
  agentSpec,
  claimOrFail,
  fenceOf,
  LEASE_MS,
  rejectsWith,
  StoreHarness,
  succeeded,
  TENANT,
  turn,
} from './harness.ts';

export function enqueueSuite(factory: StoreFactory): void {
  describe('enqueue', () => {
    const harness = new StoreHarness(factory);

    it('queues a new run with a run.queued trace event', async () => {
      const { store } = await harness.fresh();
      const input = turn({ request_id: 'req-1', delivery: { destination: 'tg:1' } });
      const { run, deduplicated } = await store.enqueueRun(input);
      assert.equal(deduplicated, false);
      assert.equal(run.run_id, input.run_id);
      assert.equal(run.status, 'queued');
      assert.equal(run.attempt, 0);
      assert.deepEqual(run.delivery, { destination: 'tg:1' });
      assert.deepEqual(run.input, { text: 'hello' });
      assert.equal(run.started_at, null);
      const trace = await store.getTrace(TENANT, run.run_id, 0, 100);
      assert.deepEqual(
        trace?.map((event) => [event.seq, event.type]),
        [[1, 'run.queued']],
      );
      assert.deepEqual(await store.getRun(TENANT, run.run_id), run);
    });

    it('a replayed request_id returns the same run with its current status, also after a restart', async () => {
      const { store, clock } = await harness.fresh();
      const first = turn({ request_id: 'req-dup' });
      const original = await store.enqueueRun(first);
      await claimOrFail(store);
      const replay = await store.enqueueRun({ ...first, run_id: 'another-id' });
      assert.equal(replay.deduplicated, true);
      assert.equal(replay.run.run_id, original.run.run_id);
      assert.equal(replay.run.status, 'running');
      await store.close();
      const reopened = await harness.reopen(store, clock);
      const afterRestart = await reopened.enqueueRun({ ...first, run_id: 'a-third-id' });
      assert.equal(afterRestart.deduplicated, true);
      assert.equal(afterRestart.run.run_id, original.run.run_id);
      const page = await reopened.listRuns(TENANT, {}, 50);
      assert.equal(page.items.length, 1);
    });

    it('the same request_id for a different request is IDEMPOTENCY_KEY_REUSED and writes nothing', async () => {
      const { store } = await harness.fresh();
      await store.enqueueRun(turn({ request_id: 'req-x' }));
      await rejectsWith(
        store.enqueueRun(turn({ request_id: 'req-x', input: { text: 'something else' } })),
        'IDEMPOTENCY_KEY_REUSED',
      );
      assert.equal((await store.listRuns(TENANT, {}, 50)).items.length, 1);
    });

    it('request ids are scoped to the tenant', async () => {
      const { store } = await harness.fresh();
      await store.createTenant('t2', {});
      await store.putAgent('t2', AGENT, agentSpec());
      const a = await store.enqueueRun(turn({ request_id: 'shared' }));
      const b = await store.enqueueRun(turn({ tenant: 't2', request_id: 'shared' }));
      assert.equal(b.deduplicated, false);
      assert.notEqual(a.run.run_id, b.run.run_id);
    });

    it('an unknown tenant or agent is rejected and writes nothing', async () => {
      const { store } = await harness.fresh();
      await rejectsWith(store.enqueueRun(turn({ tenant: 'nobody' })), 'TENANT_NOT_FOUND');
      await rejectsWith(store.enqueueRun(turn({ agent: 'nobody' })), 'AGENT_NOT_FOUND');
      assert.equal((await store.listRuns(TENANT, {}, 50)).items.length, 0);
      assert.equal((await store.stats()).runs_by_status.queued, 0);
    });

    it("on_busy 'reject' is SCOPE_BUSY while the lane has a queued or running run", async () => {
      const { store } = await harness.fresh();
      await store.enqueueRun(turn());
      await rejectsWith(store.enqueueRun(turn({ on_busy: 'reject' })), 'SCOPE_BUSY');
      const claimed = await claimOrFail(store);
      await rejectsWith(store.enqueueRun(turn({ on_busy: 'reject' })), 'SCOPE_BUSY');
      const otherScope = await store.enqueueRun(turn({ scope: 's2', on_busy: 'reject' }));
      assert.equal(otherScope.run.status, 'queued');
      await store.finalizeRun(fenceOf(claimed), succeeded('done'));
      const free = await store.enqueueRun(turn({ on_busy: 'reject' }));
      assert.equal(free.run.status, 'queued');
      assert.equal((await store.listRuns(TENANT, { scope: 's1' }, 50)).items.length, 2);
    });
  });
}

async function drainLane(store: Store): Promise<string[]> {
  const order: string[] = [];
  for (;;) {
    const claimed = await store.claimNextRun({ owner: 'w', lease_ms: LEASE_MS });
    if (!claimed) return order;
    order.push(claimed.run.run_id);
    await store.finalizeRun(fenceOf(claimed), succeeded('ok'));
  }
}

export function claimSuite(factory: StoreFactory): void {
  describe('claim and lanes', () => {
    const harness = new StoreHarness(factory);

    it('claims with attempt 1, a lease, the agent snapshot and a run.claimed event', async () => {
      const { store, clock } = await harness.fresh();
      const { run } = await store.enqueueRun(turn());
      const claimed = await store.claimNextRun({ owner: 'worker-7', lease_ms: 5000 });
      assert.ok(claimed);
      assert.equal(claimed.run.run_id, run.run_id);
      assert.equal(claimed.run.status, 'running');
      assert.equal(claimed.run.attempt, 1);
      assert.equal(claimed.run.started_at, new Date(clock.now()).toISOString());
      assert.equal(claimed.elapsed_ms, 0);
      assert.equal(claimed.agent?.name, AGENT);
      assert.equal(claimed.agent?.model, 'fixture/echo');
      const trace = await store.getTrace(TENANT, run.run_id, 1, 100);
      assert.deepEqual(
        trace?.map((event) => [event.seq, event.type, event.data]),
        [[2, 'run.claimed', { attempt: 1, worker: 'worker-7' }]],
      );
      assert.equal(await store.claimNextRun({ owner: 'w', lease_ms: 5000 }), null);
    });

    it('one running run per (tenant, agent, scope); other lanes run in parallel', async () => {
      const { store } = await harness.fresh();
      await store.createTenant('t2', {});
      await store.putAgent('t2', AGENT, agentSpec());
      await store.putAgent(TENANT, 'a2', agentSpec());
      await store.enqueueRun(turn());
      await store.enqueueRun(turn());
      await store.enqueueRun(turn({ scope: 's2' }));
      await store.enqueueRun(turn({ agent: 'a2' }));
      await store.enqueueRun(turn({ tenant: 't2' }));
      const lanes = new Set<string>();
      for (let index = 0; index < 4; index += 1) {
        const claimed = await claimOrFail(store);
        const lane = `${claimed.run.tenant}/${claimed.run.agent}/${claimed.run.scope}`;
        assert.ok(!lanes.has(lane), `lane ${lane} claimed twice`);
        lanes.add(lane);
      }
      assert.equal(await store.claimNextRun({ owner: 'w', lease_ms: LEASE_MS }), null);
      assert.equal((await store.stats()).runs_by_status.running, 4);
    });

    it('runs of one scope are claimed in FIFO order', async () => {
      const { store } = await harness.fresh();
      const ids: string[] = [];
      for (let index = 0; index < 6; index += 1) {
        ids.push((await store.enqueueRun(turn({ input: { text: `m${index}` } }))).run.run_id);
      }
      assert.deepEqual(await drainLane(store), ids);
    });

    it('an idle lane is not starved behind a busy lane with a long queue', async () => {
      const { store } = await harness.fresh();
      for (let index = 0; index < 60; index += 1) await store.enqueueRun(turn({ scope: 'busy' }));
      const idle = await store.enqueueRun(turn({ scope: 'idle' }));
      const first = await claimOrFail(store);
      assert.equal(first.run.scope, 'busy');
      const second = await claimOrFail(store);
      assert.equal(second.run.run_id, idle.run.run_id);
    });

    it('an expired lease is reclaimed with attempt + 1 and keeps its lane', async () => {
      const { store, clock } = await harness.fresh();
      await store.enqueueRun(turn());
      const next = await store.enqueueRun(turn());
      const first = await claimOrFail(store);
      await store.appendProgress(fenceOf(first), { elapsed_ms: 420 });
      clock.advance(LEASE_MS - 1);
      assert.equal(await store.claimNextRun({ owner: 'w2', lease_ms: LEASE_MS }), null);
      clock.advance(1);
      const reclaimed = await claimOrFail(store, 'w2');
      assert.equal(reclaimed.run.run_id, first.run.run_id);
      assert.equal(reclaimed.run.attempt, 2);
      assert.equal(reclaimed.elapsed_ms, 420);
      assert.equal(reclaimed.run.started_at, first.run.started_at);
      assert.equal(await store.claimNextRun({ owner: 'w3', lease_ms: LEASE_MS }), null);
      await store.finalizeRun(fenceOf(reclaimed), succeeded('ok'));
      assert.equal((await claimOrFail(store)).run.run_id, next.run.run_id);
    });

    it('a heartbeat extends the lease; once it expires every running run is reclaimable', async () => {
      const { store, clock } = await harness.fresh();
      await store.enqueueRun(turn());
      await store.enqueueRun(turn({ scope: 's2' }));
      const a = await claimOrFail(store);
      const b = await claimOrFail(store);
      clock.advance(LEASE_MS - 100);
      assert.equal(await store.heartbeat(fenceOf(a), LEASE_MS), true);
      assert.equal(await store.heartbeat(fenceOf(b), LEASE_MS), true);
      clock.advance(500);
      assert.equal(await store.claimNextRun({ owner: 'w', lease_ms: LEASE_MS }), null);
      clock.advance(LEASE_MS);
      const again = [await claimOrFail(store), await claimOrFail(store)];
      assert.deepEqual(
        again.map((claimed) => claimed.run.attempt),
        [2, 2],
      );
    });

    it('a restart keeps running runs; they resume once their lease expired', async () => {
      const { store, clock } = await harness.fresh();
      await store.enqueueRun(turn());
      const claimed = await claimOrFail(store);
      await store.close();
      const reopened = await harness.reopen(store, clock);
      assert.equal((await reopened.getRun(TENANT, claimed.run.run_id))?.status, 'running');
      assert.equal(await reopened.claimNextRun({ owner: 'w', lease_ms: LEASE_MS }), null);
      clock.advance(LEASE_MS + 1);
      const resumed = await claimOrFail(reopened);
      assert.equal(resumed.run.run_id, claimed.run.run_id);
      assert.equal(resumed.run.attempt, 2);
    });

    it('two claimers on separate connections never share a lane and claim every run once', async () => {
      const { store, clock } = await harness.fresh();
      const peer = await harness.peer(store, clock);
      const lanes = 300;
      const perLane = 3;
      const enqueued = new Map<string, string[]>();
      // Rounds one after another (each lane's FIFO order); within a round, eight enqueuers
      // share the lanes: concurrent commits share flushes, so 900 enqueues do not cost 900.
      for (let round = 0; round < perLane; round += 1) {
        let next = 0;
        const enqueuer = async (): Promise<void> => {
          for (let lane = next++; lane < lanes; lane = next++) {
            const { run } = await store.enqueueRun(turn({ scope: `lane-${lane}` }));
            enqueued.set(run.scope, [...(enqueued.get(run.scope) ?? []), run.run_id]);
          }
        };
        await Promise.all(Array.from({ length: 8 }, enqueuer));
      }
      const busy = new Set<string>();
      const claimsPerRun = new Map<string, number>();
      const claimOrder = new Map<string, string[]>();
      let overlaps = 0;
      const claimer = async (connection: Store, name: string): Promise<void> => {
        for (;;) {
          const claimed = await connection.claimNextRun({ owner: name, lease_ms: 60_000 });
          if (!claimed) return;
          const { run } = claimed;
          // Marked after the claim returns and cleared before finalize is called: this
          // interval lies inside the database's, so an overlap here is a real one.
          if (busy.has(run.scope)) overlaps += 1;
          busy.add(run.scope);
          claimsPerRun.set(run.run_id, (claimsPerRun.get(run.run_id) ?? 0) + 1);
          claimOrder.set(run.scope, [...(claimOrder.get(run.scope) ?? []), run.run_id]);
          // A write while holding the lane gives the other claimers a turn to misbehave.
          await connection.appendProgress(fenceOf(claimed), { steps: 1 });
          busy.delete(run.scope);
          await connection.finalizeRun(fenceOf(claimed), succeeded('ok'));
        }
      };
      // Four claimers per connection pool (PostgreSQL: four connections each), eight racing.
      await Promise.all(
        ['a', 'b', 'c', 'd'].flatMap((name) => [
          claimer(store, `primary-${name}`),
          claimer(peer, `peer-${name}`),
        ]),
      );
      assert.equal(overlaps, 0);
      assert.equal(claimsPerRun.size, lanes * perLane);
      assert.ok([...claimsPerRun.values()].every((count) => count === 1));
      assert.deepEqual(claimOrder, enqueued);
      const stats = await store.stats();
      assert.equal(stats.runs_by_status.succeeded, lanes * perLane);
      assert.equal(stats.runs_by_status.running + stats.runs_by_status.queued, 0);
    });
  });
}
