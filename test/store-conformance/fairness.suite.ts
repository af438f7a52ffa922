// Fairness between tenants (src/store/rules/tenant-fairness.ts): the claim prefers the
// tenant with the fewest running runs and honours a per-tenant running cap; the queued
// run limit is exact under racing enqueues (a due schedule fire past it is skipped), and so
// are the schedule and agent quotas; due schedules come round-robin over tenants.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createScheduler } from '../../src/schedules/scheduler.ts';
import type { ScheduleWrite, Store } from '../../src/store/store.ts';
import type { StoreFactory } from './harness.ts';
import { AGENT, agentSpec, claimOrFail, LEASE_MS, StoreHarness, TENANT, turn } from './harness.ts';

const OTHER = 't2';

async function addTenant(store: Store, tenant: string): Promise<void> {
  await store.createTenant(tenant, {});
  await store.putAgent(tenant, AGENT, agentSpec());
}

function dueSchedule(nextFireAt: string, scope: string): ScheduleWrite {
  return {
    agent: AGENT,
    scope,
    payload: { text: 'tick' },
    timing: { kind: 'every', every_ms: 60_000 },
    misfire: 'run_once',
    enabled: true,
    delivery: null,
    next_fire_at: nextFireAt,
  };
}

export function fairnessSuite(factory: StoreFactory): void {
  describe('fairness between tenants', () => {
    const harness = new StoreHarness(factory);

    it('the claim prefers the tenant with the fewest running runs over an older queue', async () => {
      const { store } = await harness.fresh();
      await addTenant(store, OTHER);
      // t1 queues five runs in five lanes first; t2 queues one later.
      for (let index = 0; index < 5; index += 1)
        await store.enqueueRun(turn({ scope: `s${index}` }));
      const late = await store.enqueueRun(turn({ tenant: OTHER }));
      const first = await claimOrFail(store);
      assert.equal(first.run.tenant, TENANT, 'equal load: the oldest run goes first');
      const second = await claimOrFail(store);
      assert.equal(second.run.run_id, late.run.run_id, 't2 (0 running) goes before t1 (1 running)');
      const rest = [await claimOrFail(store), await claimOrFail(store)];
      assert.deepEqual(
        rest.map((claimed) => claimed.run.tenant),
        [TENANT, TENANT],
      );
    });

    it('a tenant at its running cap is passed over; others still claim', async () => {
      const { store } = await harness.fresh();
      await addTenant(store, OTHER);
      for (let index = 0; index < 4; index += 1)
        await store.enqueueRun(turn({ scope: `s${index}` }));
      const capped = { owner: 'w1', lease_ms: LEASE_MS, max_running_per_tenant: 2 };
      const claimedTenants: string[] = [];
      for (let index = 0; index < 2; index += 1) {
        const claimed = await store.claimNextRun(capped);
        claimedTenants.push(claimed?.run.tenant ?? 'none');
      }
      assert.deepEqual(claimedTenants, [TENANT, TENANT]);
      assert.equal(await store.claimNextRun(capped), null, 't1 is at its cap of 2');
      const other = await store.enqueueRun(turn({ tenant: OTHER }));
      assert.equal((await store.claimNextRun(capped))?.run.run_id, other.run.run_id);
      // Without a cap the remaining t1 runs are claimable again.
      assert.equal(
        (await store.claimNextRun({ owner: 'w1', lease_ms: LEASE_MS }))?.run.tenant,
        TENANT,
      );
    });

    it('the default cap (binds only with another tenant): one tenant alone takes every slot', async () => {
      const { store } = await harness.fresh();
      for (let index = 0; index < 4; index += 1)
        await store.enqueueRun(turn({ scope: `s${index}` }));
      const defaultCap = {
        owner: 'w1',
        lease_ms: LEASE_MS,
        max_running_per_tenant: 2,
        running_cap_when_alone: false,
      };
      const alone: string[] = [];
      for (let claimed = await store.claimNextRun(defaultCap); claimed;) {
        alone.push(claimed.run.tenant);
        claimed = await store.claimNextRun(defaultCap);
      }
      console.log(`default cap 2, one tenant: ${alone.length} of 4 queued runs claimed`);
      assert.deepEqual(alone, [TENANT, TENANT, TENANT, TENANT], 'no slot held back');
    });

    it('the default cap binds once the store holds a second tenant; an explicit cap binds alone', async () => {
      const { store } = await harness.fresh();
      for (let index = 0; index < 4; index += 1)
        await store.enqueueRun(turn({ scope: `s${index}` }));
      const explicit = { owner: 'w1', lease_ms: LEASE_MS, max_running_per_tenant: 1 };
      assert.equal((await store.claimNextRun(explicit))?.run.tenant, TENANT);
      assert.equal(await store.claimNextRun(explicit), null, 'an explicit cap binds alone');
      // A second tenant (nothing queued yet): the default cap of 2 now binds for t1.
      await addTenant(store, OTHER);
      const defaultCap = { ...explicit, max_running_per_tenant: 2, running_cap_when_alone: false };
      assert.equal((await store.claimNextRun(defaultCap))?.run.tenant, TENANT);
      assert.equal(await store.claimNextRun(defaultCap), null, 't1 is at its cap of 2');
      const other = await store.enqueueRun(turn({ tenant: OTHER }));
      assert.equal((await store.claimNextRun(defaultCap))?.run.run_id, other.run.run_id);
    });

    it('the queued-run limit refuses with RATE_LIMITED; replays and other tenants pass', async () => {
      const { store } = await harness.fresh();
      await addTenant(store, OTHER);
      const limited = (overrides: Parameters<typeof turn>[0] = {}) =>
        turn({ max_queued: 2, ...overrides });
      await store.enqueueRun(limited({ request_id: 'r1' }));
      await store.enqueueRun(limited({ scope: 'b' }));
      try {
        await store.enqueueRun(limited({ scope: 'c' }));
        assert.fail('expected RATE_LIMITED');
      } catch (error) {
        const refused = error as { code?: string; details?: { retry_after_s?: number } };
        assert.equal(refused.code, 'RATE_LIMITED');
        assert.ok((refused.details?.retry_after_s ?? 0) > 0, 'a Retry-After hint');
      }
      const replay = await store.enqueueRun(limited({ request_id: 'r1' }));
      assert.equal(replay.deduplicated, true);
      await store.enqueueRun(limited({ tenant: OTHER }));
      await claimOrFail(store);
      await store.enqueueRun(limited({ scope: 'c' }));
      const page = await store.listRuns(TENANT, { status: 'queued' }, 50);
      assert.equal(page.items.length, 2);
    });

    it('racing enqueues on separate connections cannot both take the last place', async () => {
      const { store, clock } = await harness.fresh();
      const peer = await harness.peer(store, clock);
      const attempts = Array.from({ length: 12 }, (_, index) =>
        (index % 2 === 0 ? store : peer).enqueueRun(turn({ scope: `s${index}`, max_queued: 5 })),
      );
      const results = await Promise.allSettled(attempts);
      const accepted = results.filter((result) => result.status === 'fulfilled').length;
      const refused = results.filter(
        (result) =>
          result.status === 'rejected' &&
          (result.reason as { code?: string }).code === 'RATE_LIMITED',
      ).length;
      console.log(`racing enqueues: accepted=${accepted} refused=${refused} (limit 5)`);
      assert.equal(accepted, 5);
      assert.equal(refused, 7);
      assert.equal((await store.listRuns(TENANT, { status: 'queued' }, 50)).items.length, 5);
    });

    it('a due schedule fire past the queued-run limit enqueues nothing: skipped, noted, advanced', async () => {
      const { store, clock } = await harness.fresh();
      await store.enqueueRun(turn({ scope: 'a' }));
      await store.enqueueRun(turn({ scope: 'b' }));
      const dueAt = new Date(clock.now() - 1000).toISOString();
      await store.putSchedule(TENANT, 'flood', dueSchedule(dueAt, 'f'));
      const scheduler = createScheduler({ store, now: clock.now, maxQueued: 2 });
      const full = await scheduler.tick();
      const queued = async () => (await store.listRuns(TENANT, { status: 'queued' }, 50)).items;
      const skipped = await store.getSchedule(TENANT, 'flood');
      console.log(
        `due fire with 2 of 2 queued: fired=${full.fired} skipped=${full.skipped} queued=${(await queued()).length}; last_error: ${skipped?.last_error}`,
      );
      assert.equal(full.fired, 0);
      assert.equal(full.skipped, 1);
      assert.equal((await queued()).length, 2, 'the fire queued past the limit');
      assert.match(skipped?.last_error ?? '', /skipped the fire due at .*queued_runs/);
      assert.equal(skipped?.enabled, true);
      assert.equal(skipped?.last_run_id, null);
      assert.ok(Date.parse(skipped?.next_fire_at ?? '') > clock.now(), 'advanced as usual');
      assert.equal((await scheduler.tick()).due, 0, 'not retried on the next tick');
      // Room again: the next occurrence fires and clears the note.
      await claimOrFail(store);
      clock.advance(60_000);
      const room = await scheduler.tick();
      assert.equal(room.fired, 1);
      assert.equal((await queued()).length, 2);
      const fired = await store.getSchedule(TENANT, 'flood');
      assert.equal(fired?.last_error, null);
      assert.notEqual(fired?.last_run_id, null);
    });

    it('a schedule create past max_schedules is QUOTA_EXCEEDED; replacing one is fine', async () => {
      const { store } = await harness.fresh();
      await addTenant(store, OTHER);
      const due = new Date(Date.now() + 60_000).toISOString();
      const quota = (scope: string) => ({ ...dueSchedule(due, scope), max_schedules: 2 });
      await store.putSchedule(TENANT, 'one', quota('a'));
      await store.putSchedule(TENANT, 'two', quota('b'));
      await assert.rejects(store.putSchedule(TENANT, 'three', quota('c')), {
        code: 'QUOTA_EXCEEDED',
      });
      const replaced = await store.putSchedule(TENANT, 'two', quota('b2'));
      assert.equal(replaced.created, false);
      await store.putSchedule(OTHER, 'one', quota('a'));
      assert.equal((await store.listSchedules(TENANT, {}, 50)).items.length, 2);
    });

    it('an agent create past max agents is QUOTA_EXCEEDED; replacing one is fine', async () => {
      const { store } = await harness.fresh();
      await addTenant(store, OTHER);
      // The tenant already has AGENT: a quota of 2 leaves one place.
      await store.putAgent(TENANT, 'second', agentSpec(), 2);
      await assert.rejects(store.putAgent(TENANT, 'third', agentSpec(), 2), {
        code: 'QUOTA_EXCEEDED',
      });
      assert.equal(await store.getAgent(TENANT, 'third'), null);
      const replaced = await store.putAgent(TENANT, 'second', agentSpec({ max_steps: 3 }), 2);
      assert.equal(replaced.created, false);
      await store.putAgent(OTHER, 'second', agentSpec(), 2);
      assert.deepEqual(
        (await store.listAgents(TENANT, 50)).items.map((agent) => agent.name),
        [AGENT, 'second'],
      );
    });

    it('racing agent creates on separate connections cannot both take the last place', async () => {
      const { store, clock } = await harness.fresh();
      const peer = await harness.peer(store, clock);
      const attempts = Array.from({ length: 12 }, (_, index) =>
        (index % 2 === 0 ? store : peer).putAgent(TENANT, `racer-${index}`, agentSpec(), 5),
      );
      const results = await Promise.allSettled(attempts);
      const accepted = results.filter((result) => result.status === 'fulfilled').length;
      const refused = results.filter(
        (result) =>
          result.status === 'rejected' &&
          (result.reason as { code?: string }).code === 'QUOTA_EXCEEDED',
      ).length;
      console.log(`racing agent creates: accepted=${accepted} refused=${refused} (limit 5)`);
      // AGENT already holds one of the five places.
      assert.equal(accepted, 4);
      assert.equal(refused, 8);
      assert.equal((await store.listAgents(TENANT, 50)).items.length, 5);
    });

    it('due schedules come round-robin over tenants, not oldest-first across all', async () => {
      const { store, clock } = await harness.fresh();
      await addTenant(store, OTHER);
      const past = (ms: number) => new Date(clock.now() - ms).toISOString();
      // t1: 20 schedules due long ago; t2: 2 due just now.
      for (let index = 0; index < 20; index += 1) {
        await store.putSchedule(
          TENANT,
          `flood-${index}`,
          dueSchedule(past(60_000 - index), `f${index}`),
        );
      }
      await store.putSchedule(OTHER, 'b-0', dueSchedule(past(10), 'b0'));
      await store.putSchedule(OTHER, 'b-1', dueSchedule(past(5), 'b1'));
      const batch = await store.dueSchedules(4);
      assert.deepEqual(
        batch.map((schedule) => `${schedule.tenant}/${schedule.name}`),
        [`${TENANT}/flood-0`, `${OTHER}/b-0`, `${TENANT}/flood-1`, `${OTHER}/b-1`],
      );
    });
  });
}
