// Model usage and budgets (src/store/rules/usage.ts): the ledger grows in the same
// transaction as the `model.response` events of a progress write, so its totals are the
// sum of the journal's usage — a stale (fenced-out) write adds nothing, a second
// connection's writes add up, a reopened store keeps them; groups by agent, day, model,
// thread and run; a tenant's daily budget refuses new turns (not replays) until the next
// UTC day.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/store/store.ts';
import type { ProgressInput } from '../../src/store/store.ts';
import type { StoreFactory } from './harness.ts';
import { AGENT, StoreHarness, TENANT, claimOrFail, fenceOf, rejectsWith, turn } from './harness.ts';

const DAY_MS = 86_400_000;

function response(
  input: number,
  output: number,
  model = 'fixture/echo',
  cost = 0,
): NonNullable<ProgressInput['events']>[number] {
  return {
    type: 'model.response',
    data: { step: 1, usage: { input_tokens: input, output_tokens: output }, model, cost_usd: cost },
  };
}

/** The journal's usage: the sum over the runs' `model.response` events. */
async function journalUsage(
  store: Store,
  runIds: string[],
): Promise<{ input: number; output: number; calls: number }> {
  const sum = { input: 0, output: 0, calls: 0 };
  for (const runId of runIds) {
    const events = (await store.getTrace(TENANT, runId, 0, 10_000)) ?? [];
    for (const event of events) {
      if (event.type !== 'model.response') continue;
      const usage = event.data.usage as { input_tokens: number; output_tokens: number };
      sum.input += usage.input_tokens;
      sum.output += usage.output_tokens;
      sum.calls += 1;
    }
  }
  return sum;
}

function today(clock: { now(): number }): string {
  return new Date(clock.now()).toISOString().slice(0, 10);
}

export function usageSuite(factory: StoreFactory): void {
  describe('model usage and budgets', () => {
    const harness = new StoreHarness(factory);

    it('the ledger is the journal: per model, stale writes add nothing, peers add up', async () => {
      const { store, clock } = await harness.fresh();
      const a = await store.enqueueRun(turn({ scope: 'sa' }));
      const claimed = await claimOrFail(store);
      await store.appendProgress(fenceOf(claimed), {
        events: [response(100, 10, 'fixture/echo', 0.5), response(1, 2, 'p/other', 0.25)],
      });
      // A second connection (another worker) writes the next response of the run.
      const peer = await harness.peer(store, clock);
      await peer.appendProgress(fenceOf(claimed), { events: [response(7, 3)] });
      // The lease expires, another attempt takes the run: the old attempt's write is fenced.
      clock.advance(5_000);
      const second = await claimOrFail(peer, 'w2');
      assert.equal(second.run.attempt, 2);
      await rejectsWith(
        store.appendProgress(fenceOf(claimed), { events: [response(1000, 1000)] }),
        'LEASE_LOST',
      );
      await store.appendProgress(fenceOf(second), {
        events: [response(5, 5), { type: 'run.note', data: { text: 'x' } }],
      });

      const day = today(clock);
      const byModel = await store.getUsage(TENANT, { from: day, to: day, group_by: 'model' });
      assert.deepEqual(
        byModel.rows.map((row) => [row.key, row.input_tokens, row.output_tokens, row.model_calls]),
        [
          ['fixture/echo', 112, 18, 3],
          ['p/other', 1, 2, 1],
        ],
      );
      const journal = await journalUsage(store, [a.run.run_id]);
      assert.deepEqual(
        [byModel.total.input_tokens, byModel.total.output_tokens, byModel.total.model_calls],
        [journal.input, journal.output, journal.calls],
      );
      assert.equal(byModel.total.total_tokens, journal.input + journal.output);
      assert.ok(Math.abs(byModel.total.cost_usd - 0.75) < 1e-9, `cost ${byModel.total.cost_usd}`);
      const state = await store.getBudgetState(TENANT, a.run.run_id);
      assert.equal(state.run.total_tokens, 113 + 20);
      assert.equal(state.today.total_tokens, 113 + 20);
      assert.deepEqual(state.budget, { daily_tokens: null, daily_cost_usd: null });
    });

    it('groups by agent, thread, run and day; a reopened store keeps every total', async () => {
      const { store, clock } = await harness.fresh();
      await store.putAgent(TENANT, 'a2', (await store.getAgent(TENANT, AGENT))!);
      const one = await store.enqueueRun(turn({ scope: 's1' }));
      const two = await store.enqueueRun(turn({ agent: 'a2', scope: 's2' }));
      const claims = [await claimOrFail(store), await claimOrFail(store)];
      const c1 = claims.find((c) => c.run.run_id === one.run.run_id)!;
      const c2 = claims.find((c) => c.run.run_id === two.run.run_id)!;
      await store.appendProgress(fenceOf(c1), { events: [response(10, 1)] });
      const dayOne = today(clock);
      clock.advance(DAY_MS);
      const dayTwo = today(clock);
      await store.appendProgress(fenceOf(c1), { events: [response(20, 2)] });
      await store.appendProgress(fenceOf(c2), { events: [response(40, 4)] });
      await store.close();
      const reopened = await harness.reopen(store, clock);
      const range = { from: dayOne, to: dayTwo };
      const pairs = async (groupBy: 'agent' | 'day' | 'thread' | 'run') =>
        (await reopened.getUsage(TENANT, { ...range, group_by: groupBy })).rows.map((row) => [
          row.key,
          row.total_tokens,
        ]);
      assert.deepEqual(await pairs('agent'), [
        [AGENT, 33],
        ['a2', 44],
      ]);
      assert.deepEqual(await pairs('day'), [
        [dayOne, 11],
        [dayTwo, 66],
      ]);
      assert.deepEqual(await pairs('thread'), [
        [`${AGENT}/s1`, 33],
        ['a2/s2', 44],
      ]);
      assert.deepEqual(
        (await pairs('run')).sort(),
        [
          [one.run.run_id, 33],
          [two.run.run_id, 44],
        ].sort(),
      );
      const onlyDayTwo = await reopened.getUsage(TENANT, {
        from: dayTwo,
        to: dayTwo,
        group_by: 'day',
      });
      assert.equal(onlyDayTwo.total.total_tokens, 66);
      const other = await reopened.getUsage('nobody', { ...range, group_by: 'day' });
      assert.deepEqual(other.rows, []);
      assert.equal(other.total.total_tokens, 0);
    });

    it('a daily budget refuses new turns, not replays, until the next UTC day', async () => {
      const { store, clock } = await harness.fresh();
      await rejectsWith(
        store.putTenantBudget('nobody', { daily_tokens: 1, daily_cost_usd: null }),
        'TENANT_NOT_FOUND',
      );
      const budget = await store.putTenantBudget(TENANT, { daily_tokens: 100, daily_cost_usd: 2 });
      assert.deepEqual(budget, { daily_tokens: 100, daily_cost_usd: 2 });
      const first = await store.enqueueRun(turn({ request_id: 'r1' }));
      const claimed = await claimOrFail(store);
      await store.appendProgress(fenceOf(claimed), { events: [response(60, 39)] });
      // 99 of 100: still room.
      await store.enqueueRun(turn({ scope: 's2' }));
      await store.appendProgress(fenceOf(claimed), { events: [response(1, 0)] });
      await rejectsWith(store.enqueueRun(turn({ scope: 's3' })), 'BUDGET_EXCEEDED');
      try {
        await store.enqueueRun(turn({ scope: 's3' }));
      } catch (error) {
        const details = (error as { details: Record<string, unknown> }).details;
        assert.equal(details.limit, 'daily_tokens');
        assert.equal(details.used, 100);
        assert.ok(Number(details.retry_after_s) > 0 && Number(details.retry_after_s) <= 86_400);
      }
      // A schedule's run is not refused (it stops at its first step boundary), on both
      // backends alike (PostgreSQL refused it when enqueued outside a fire).
      const scheduled = await store.enqueueRun(turn({ scope: 's3', source: 'schedule' }));
      assert.equal(scheduled.deduplicated, false);
      // A replay of an accepted turn still answers with its run.
      const replay = await store.enqueueRun(turn({ request_id: 'r1' }));
      assert.equal(replay.deduplicated, true);
      assert.equal(replay.run.run_id, first.run.run_id);
      const state = await store.getBudgetState(TENANT, first.run.run_id);
      assert.equal(state.today.total_tokens, 100);
      // The cost budget binds too; removing both lifts the refusal.
      await store.putTenantBudget(TENANT, { daily_tokens: null, daily_cost_usd: 2 });
      await store.enqueueRun(turn({ scope: 's4' }));
      await store.putTenantBudget(TENANT, { daily_tokens: 1000, daily_cost_usd: null });
      // The next UTC day starts from zero.
      await store.putTenantBudget(TENANT, { daily_tokens: 100, daily_cost_usd: null });
      await rejectsWith(store.enqueueRun(turn({ scope: 's5' })), 'BUDGET_EXCEEDED');
      clock.advance(DAY_MS);
      await store.enqueueRun(turn({ scope: 's5' }));
      assert.equal((await store.getBudgetState(TENANT, first.run.run_id)).today.total_tokens, 0);
      assert.deepEqual(await store.getTenantBudget(TENANT), {
        daily_tokens: 100,
        daily_cost_usd: null,
      });
      assert.deepEqual(await store.getTenantBudget('nobody'), {
        daily_tokens: null,
        daily_cost_usd: null,
      });
    });
  });
}
