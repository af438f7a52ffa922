// The scheduler on an injected clock: every timing kind, DST, misfire policies after
// downtime, a crash between enqueue and advance, two schedulers racing on one store,
// and a schedule whose agent is gone.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createFailpoints } from '../src/failpoints.ts';
import { createScheduler, fireRequestId, planFire } from '../src/schedules/scheduler.ts';
import { scheduleFixture, scheduleRuns } from './helpers/schedule-store.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('scheduler: timing kinds', () => {
  it('fires a cron line in its time zone, once per occurrence', async () => {
    const fx = await scheduleFixture('2026-01-15T06:00:00.000Z');
    try {
      const { schedule } = await fx.put('daily', { cron: '0 8 * * *', timezone: 'Europe/Berlin' });
      assert.equal(schedule.next_fire_at, '2026-01-15T07:00:00.000Z'); // 08:00 CET
      const scheduler = createScheduler({ store: fx.store, now: fx.clock.now, maxQueued: null });
      assert.equal((await scheduler.tick()).fired, 0);
      fx.clock.advance(HOUR);
      assert.equal((await scheduler.tick()).fired, 1);
      assert.equal((await scheduler.tick()).fired, 0);
      fx.clock.advance(24 * HOUR);
      assert.equal((await scheduler.tick()).fired, 1);
      assert.deepEqual(await scheduleRuns(fx.store), [
        'schedule:daily:2026-01-15T07:00:00.000Z',
        'schedule:daily:2026-01-16T07:00:00.000Z',
      ]);
      const after = await fx.store.getSchedule('t1', 'daily');
      assert.equal(after?.next_fire_at, '2026-01-17T07:00:00.000Z');
      assert.equal(after?.last_fired_at, new Date(fx.clock.now()).toISOString());
      const runs = await fx.store.listRuns('t1', {}, 10);
      assert.equal(after?.last_run_id, runs.items[0]?.run_id);
      assert.equal(runs.items[0]?.source, 'schedule');
      assert.deepEqual(runs.items[0]?.input, { text: 'daily' });
    } finally {
      await fx.close();
    }
  });

  it('fires every_ms on its phase', async () => {
    const fx = await scheduleFixture('2026-01-15T00:00:00.000Z');
    try {
      await fx.put('tick', { every_ms: 5000 });
      const scheduler = createScheduler({ store: fx.store, now: fx.clock.now, maxQueued: null });
      for (let step = 0; step < 4; step += 1) {
        fx.clock.advance(5000);
        assert.equal((await scheduler.tick()).fired, 1);
      }
      fx.clock.advance(2000);
      assert.equal((await scheduler.tick()).fired, 0);
      assert.equal((await scheduleRuns(fx.store)).length, 4);
      assert.equal(
        (await fx.store.getSchedule('t1', 'tick'))?.next_fire_at,
        '2026-01-15T00:00:25.000Z',
      );
    } finally {
      await fx.close();
    }
  });

  it('fires an at schedule once, then disables it', async () => {
    const fx = await scheduleFixture('2026-01-15T00:00:00.000Z');
    try {
      await fx.put('once', { at: '2026-01-15T00:10:00+00:00' });
      const scheduler = createScheduler({ store: fx.store, now: fx.clock.now, maxQueued: null });
      fx.clock.advance(10 * MINUTE);
      assert.equal((await scheduler.tick()).fired, 1);
      fx.clock.advance(HOUR);
      assert.equal((await scheduler.tick()).due, 0);
      const after = await fx.store.getSchedule('t1', 'once');
      assert.equal(after?.enabled, false);
      assert.equal(after?.next_fire_at, null);
      assert.deepEqual(await scheduleRuns(fx.store), ['schedule:once:2026-01-15T00:10:00.000Z']);
    } finally {
      await fx.close();
    }
  });

  it('rejects an at in the past', async () => {
    const fx = await scheduleFixture('2026-01-15T00:00:00.000Z');
    try {
      await assert.rejects(
        async () => fx.put('late', { at: '2026-01-14T23:59:59Z' }),
        /in the past/,
      );
      assert.equal(await fx.store.getSchedule('t1', 'late'), null);
    } finally {
      await fx.close();
    }
  });
});

describe('scheduler: DST in Europe/Berlin (30 2 * * *)', () => {
  // Ticks every 5 minutes through a window; returns the fire times of the runs.
  async function firesThrough(start: string, hours: number): Promise<string[]> {
    const fx = await scheduleFixture(start);
    try {
      await fx.put('night', { cron: '30 2 * * *', timezone: 'Europe/Berlin' });
      const scheduler = createScheduler({ store: fx.store, now: fx.clock.now, maxQueued: null });
      for (let minutes = 0; minutes < hours * 60; minutes += 5) {
        fx.clock.advance(5 * MINUTE);
        await scheduler.tick();
      }
      return (await scheduleRuns(fx.store)).map((id) => id.replace('schedule:night:', ''));
    } finally {
      await fx.close();
    }
  }

  it('spring forward: the skipped 02:30 fires once right after the gap (03:00 CEST)', async () => {
    const fires = await firesThrough('2026-03-28T12:00:00.000Z', 72);
    assert.deepEqual(fires, [
      '2026-03-29T01:00:00.000Z', // 02:30 does not exist; 03:00 CEST
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
      '2026-03-31T00:30:00.000Z',
    ]);
  });

  it('fall back: the repeated 02:30 fires exactly once', async () => {
    const fires = await firesThrough('2026-10-24T12:00:00.000Z', 72);
    assert.deepEqual(fires, [
      '2026-10-25T00:30:00.000Z', // 02:30 CEST (first pass); not again at 02:30 CET
      '2026-10-26T01:30:00.000Z', // 02:30 CET
      '2026-10-27T01:30:00.000Z',
    ]);
  });
});

describe('scheduler: misfire after downtime', () => {
  it('skip: no run for the missed fires, next_fire_at jumps to the future', async () => {
    const fx = await scheduleFixture('2026-01-15T00:00:00.000Z');
    try {
      await fx.put('hourly', { cron: '0 * * * *', timezone: 'UTC', misfire: 'skip' });
      fx.clock.advance(5 * HOUR + 10 * MINUTE); // down for five occurrences
      const report = await createScheduler({
        store: fx.store,
        now: fx.clock.now,
        maxQueued: null,
      }).tick();
      assert.equal(report.skipped, 1);
      assert.deepEqual(await scheduleRuns(fx.store), []);
      const after = await fx.store.getSchedule('t1', 'hourly');
      assert.equal(after?.next_fire_at, '2026-01-15T06:00:00.000Z');
      assert.match(after?.last_error ?? '', /misfire = skip/);
    } finally {
      await fx.close();
    }
  });

  it('run_once: exactly one catch-up run, then the future', async () => {
    const fx = await scheduleFixture('2026-01-15T00:00:00.000Z');
    try {
      await fx.put('hourly', { cron: '0 * * * *', timezone: 'UTC' });
      fx.clock.advance(5 * HOUR + 10 * MINUTE);
      const scheduler = createScheduler({ store: fx.store, now: fx.clock.now, maxQueued: null });
      assert.equal((await scheduler.tick()).fired, 1);
      assert.equal((await scheduler.tick()).fired, 0);
      assert.deepEqual(await scheduleRuns(fx.store), ['schedule:hourly:2026-01-15T01:00:00.000Z']);
      assert.equal(
        (await fx.store.getSchedule('t1', 'hourly'))?.next_fire_at,
        '2026-01-15T06:00:00.000Z',
      );
    } finally {
      await fx.close();
    }
  });
});

describe('scheduler: crash between enqueue and advance', () => {
  it('a throw at schedule.fire.before_commit commits nothing; the next tick fires once', async () => {
    const failpoints = createFailpoints({
      enabled: true,
      spec: 'schedule.fire.before_commit=1*throw(crash)',
    });
    const fx = await scheduleFixture('2026-01-15T00:00:00.000Z', failpoints);
    try {
      await fx.put('tick', { every_ms: 60_000 });
      fx.clock.advance(60_000);
      const scheduler = createScheduler({ store: fx.store, now: fx.clock.now, maxQueued: null });
      const crashed = await scheduler.tick();
      assert.equal(crashed.errors, 1);
      assert.deepEqual(await scheduleRuns(fx.store), [], 'the enqueue was rolled back');
      assert.equal(
        (await fx.store.getSchedule('t1', 'tick'))?.next_fire_at,
        '2026-01-15T00:01:00.000Z',
        'next_fire_at was not advanced',
      );
      assert.equal((await scheduler.tick()).fired, 1);
      assert.equal((await scheduler.tick()).fired, 0);
      assert.deepEqual(await scheduleRuns(fx.store), ['schedule:tick:2026-01-15T00:01:00.000Z']);
    } finally {
      await fx.close();
    }
  });

  it('a fire planned from a stale read is refused; a replayed request_id never doubles the run', async () => {
    const fx = await scheduleFixture('2026-01-15T00:00:00.000Z');
    try {
      await fx.put('tick', { every_ms: 60_000 });
      fx.clock.advance(60_000);
      const [due] = await fx.store.dueSchedules(10);
      assert.ok(due);
      const plan = planFire(due, fx.clock.now(), 60_000, null);
      assert.equal((await fx.store.fireSchedule(plan)).outcome, 'fired');
      // The same plan again (a second scheduler that read before the first committed):
      const replay = await fx.store.fireSchedule({
        ...plan,
        run: planFire(due, fx.clock.now(), 60_000, null).run,
      });
      assert.equal(replay.outcome, 'stale');
      // Without the next_fire_at/revision guard, the request_id still deduplicates:
      const fresh = await fx.store.getSchedule('t1', 'tick');
      assert.ok(fresh);
      const forced = await fx.store.fireSchedule({
        ...planFire(due, fx.clock.now(), 60_000, null),
        revision: fresh.revision,
        expected_next_fire_at: fresh.next_fire_at as string,
      });
      assert.equal(forced.outcome, 'fired');
      assert.equal(forced.deduplicated, true);
      assert.equal(
        forced.run?.request_id,
        fireRequestId('tick', Date.parse('2026-01-15T00:01:00Z')),
      );
      assert.deepEqual(await scheduleRuns(fx.store), ['schedule:tick:2026-01-15T00:01:00.000Z']);
    } finally {
      await fx.close();
    }
  });
});

describe('scheduler: two schedulers on one store', () => {
  it('each fire happens exactly once', async () => {
    const fx = await scheduleFixture('2026-01-15T00:00:00.000Z');
    try {
      for (let index = 0; index < 10; index += 1) await fx.put(`s${index}`, { every_ms: 1000 });
      const peer = await fx.peer();
      const first = createScheduler({ store: fx.store, now: fx.clock.now, maxQueued: null });
      const second = createScheduler({ store: peer, now: fx.clock.now, maxQueued: null });
      let stale = 0;
      for (let round = 0; round < 20; round += 1) {
        fx.clock.advance(1000);
        const reports = await Promise.all([first.tick(), second.tick(), first.tick()]);
        stale += reports.reduce((sum, report) => sum + report.stale, 0);
      }
      const ids = await scheduleRuns(fx.store);
      assert.equal(ids.length, 10 * 20);
      assert.equal(new Set(ids).size, ids.length, 'no fire twice');
      console.log(
        `schedule race schedulers=2 fires=${ids.length} doubled=0 stale_refused=${stale}`,
      );
    } finally {
      await fx.close();
    }
  });
});

describe('scheduler: agent gone', () => {
  it('a due schedule whose agent vanished is disabled with last_error, once', async () => {
    const fx = await scheduleFixture('2026-01-15T00:00:00.000Z');
    try {
      await fx.put('orphan', { every_ms: 1000 });
      // Remove the agent behind the store's back (as an older keel would leave it).
      const raw = (
        fx.store as unknown as {
          ctx: { db: { prepare(sql: string): { run(...a: unknown[]): void } } };
        }
      ).ctx.db;
      raw.prepare("DELETE FROM agents WHERE tenant = 't1' AND name = 'a1'").run();
      fx.clock.advance(1000);
      const scheduler = createScheduler({ store: fx.store, now: fx.clock.now, maxQueued: null });
      assert.equal((await scheduler.tick()).disabled, 1);
      fx.clock.advance(1000);
      assert.equal((await scheduler.tick()).due, 0, 'not failing every tick');
      const after = await fx.store.getSchedule('t1', 'orphan');
      assert.equal(after?.enabled, false);
      assert.match(after?.last_error ?? '', /agent a1 not found/);
      assert.deepEqual(await scheduleRuns(fx.store), []);
    } finally {
      await fx.close();
    }
  });

  it('deleting an agent disables its schedules in the same transaction', async () => {
    const fx = await scheduleFixture('2026-01-15T00:00:00.000Z');
    try {
      await fx.put('mine', { every_ms: 1000 });
      assert.equal(await fx.store.deleteAgent('t1', 'a1'), true);
      const after = await fx.store.getSchedule('t1', 'mine');
      assert.equal(after?.enabled, false);
      assert.equal(after?.next_fire_at, null);
      assert.match(after?.last_error ?? '', /was deleted/);
    } finally {
      await fx.close();
    }
  });
});
