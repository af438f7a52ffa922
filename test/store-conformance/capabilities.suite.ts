// Artifacts and schedules: the storage side of the built-in capabilities, checked
// through the Store interface only so every backend keeps the same semantics.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import type { ScheduleWrite, Store } from '../../src/store/store.ts';
import type { StoreFactory } from './harness.ts';
import { AGENT, agentSpec, rejectsWith, StoreHarness, TENANT, turn } from './harness.ts';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

function everyMinute(
  nextFireAt: string | null,
  overrides: Partial<ScheduleWrite> = {},
): ScheduleWrite {
  return {
    agent: AGENT,
    scope: 'daily',
    payload: { text: 'summarize' },
    timing: { kind: 'every', every_ms: 60_000 },
    misfire: 'run_once',
    enabled: true,
    delivery: null,
    next_fire_at: nextFireAt,
    ...overrides,
  };
}

async function allArtifactPaths(store: Store, prefix: string, limit: number): Promise<string[]> {
  const paths: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page += 1) {
    const result = await store.listArtifacts(TENANT, prefix, limit, cursor);
    paths.push(...result.items.map((item) => item.path));
    if (!result.next_cursor) return paths;
    cursor = result.next_cursor;
  }
  throw new Error('paging did not end');
}

export function capabilitiesSuite(factory: StoreFactory): void {
  describe('artifacts', () => {
    const harness = new StoreHarness(factory);

    it('stores bytes with content type, size and sha256; replaces in place', async () => {
      const { store } = await harness.fresh();
      const first = await store.putArtifact(TENANT, 'notes/a.txt', {
        body: bytes('hello'),
        content_type: 'text/plain',
        metadata: { source: 'test' },
      });
      assert.equal(first.created, true);
      assert.equal(first.artifact.size_bytes, 5);
      assert.equal(first.artifact.sha256, createHash('sha256').update('hello').digest('hex'));
      const read = await store.getArtifact(TENANT, 'notes/a.txt');
      assert.ok(read);
      assert.equal(Buffer.from(read.body).toString(), 'hello');
      assert.equal(read.content_type, 'text/plain');
      assert.deepEqual(read.metadata, { source: 'test' });

      const second = await store.putArtifact(TENANT, 'notes/a.txt', {
        body: bytes('hello, world'),
        content_type: 'text/markdown',
        metadata: {},
      });
      assert.equal(second.created, false);
      assert.equal(second.artifact.size_bytes, 12);
      assert.equal(second.artifact.created_at, first.artifact.created_at);
      assert.equal(
        Buffer.from((await store.getArtifact(TENANT, 'notes/a.txt'))?.body ?? []).toString(),
        'hello, world',
      );
    });

    it('binary bodies round-trip byte for byte', async () => {
      const { store } = await harness.fresh();
      const body = new Uint8Array(256).map((_, index) => index);
      await store.putArtifact(TENANT, 'bin/all-bytes', {
        body,
        content_type: 'application/octet-stream',
        metadata: {},
      });
      assert.deepEqual(
        Buffer.from((await store.getArtifact(TENANT, 'bin/all-bytes'))?.body ?? []),
        Buffer.from(body),
      );
    });

    it('lists by prefix with keyset paging: every path once, in path order', async () => {
      const { store } = await harness.fresh();
      const expected: string[] = [];
      for (let index = 0; index < 23; index += 1) {
        const path = `docs/${String(index).padStart(2, '0')}.md`;
        expected.push(path);
        await store.putArtifact(TENANT, path, {
          body: bytes(path),
          content_type: 'text/markdown',
          metadata: {},
        });
      }
      await store.putArtifact(TENANT, 'other/x', {
        body: bytes('x'),
        content_type: 'text/plain',
        metadata: {},
      });
      // A prefix is a plain prefix: % and _ are not wildcards.
      await store.putArtifact(TENANT, 'docsX/y', {
        body: bytes('y'),
        content_type: 'text/plain',
        metadata: {},
      });
      assert.deepEqual(await allArtifactPaths(store, 'docs/', 5), expected);
      assert.deepEqual(await allArtifactPaths(store, 'doc%', 5), []);
      assert.deepEqual(await allArtifactPaths(store, 'docs_', 5), []);
      assert.equal((await allArtifactPaths(store, '', 7)).length, 25);
    });

    it('is scoped by tenant, deletes, and needs an existing tenant', async () => {
      const { store } = await harness.fresh();
      await store.createTenant('t2', {});
      await store.putArtifact(TENANT, 'same/path', {
        body: bytes('one'),
        content_type: 'text/plain',
        metadata: {},
      });
      await store.putArtifact('t2', 'same/path', {
        body: bytes('two'),
        content_type: 'text/plain',
        metadata: {},
      });
      assert.equal(
        Buffer.from((await store.getArtifact('t2', 'same/path'))?.body ?? []).toString(),
        'two',
      );
      assert.equal(await store.deleteArtifact(TENANT, 'same/path'), true);
      assert.equal(await store.deleteArtifact(TENANT, 'same/path'), false);
      assert.equal(await store.getArtifact(TENANT, 'same/path'), null);
      assert.ok(await store.getArtifact('t2', 'same/path'));
      await rejectsWith(
        store.putArtifact('nobody', 'a', {
          body: bytes('a'),
          content_type: 'text/plain',
          metadata: {},
        }),
        'TENANT_NOT_FOUND',
      );
      await store.deleteTenant('t2');
      assert.equal(await store.getArtifact('t2', 'same/path'), null);
    });
  });

  describe('schedules', () => {
    const harness = new StoreHarness(factory);

    it('put, get, list with filters, replace, delete', async () => {
      const { store } = await harness.fresh();
      await store.putAgent(TENANT, 'a2', agentSpec());
      const due = new Date(Date.now() + 60_000).toISOString();
      const created = await store.putSchedule(TENANT, 'daily', everyMinute(due));
      assert.equal(created.created, true);
      assert.equal(created.schedule.every_ms, 60_000);
      assert.equal(created.schedule.next_fire_at, due);
      assert.equal(created.schedule.enabled, true);
      await store.putSchedule(TENANT, 'other', everyMinute(due, { agent: 'a2', scope: 'x' }));
      const replaced = await store.putSchedule(
        TENANT,
        'daily',
        everyMinute(due, {
          timing: { kind: 'cron', cron: '0 8 * * *', timezone: 'Europe/Berlin' },
        }),
      );
      assert.equal(replaced.created, false);
      assert.equal(replaced.schedule.cron, '0 8 * * *');
      assert.equal(replaced.schedule.timezone, 'Europe/Berlin');
      assert.equal(replaced.schedule.every_ms, null);
      assert.ok(replaced.schedule.revision > created.schedule.revision);
      assert.deepEqual(
        (await store.listSchedules(TENANT, {}, 50)).items.map((schedule) => schedule.name).sort(),
        ['daily', 'other'],
      );
      assert.deepEqual(
        (await store.listSchedules(TENANT, { agent: 'a2' }, 50)).items.map(
          (schedule) => schedule.name,
        ),
        ['other'],
      );
      assert.equal(await store.deleteSchedule(TENANT, 'daily'), true);
      assert.equal(await store.getSchedule(TENANT, 'daily'), null);
      await rejectsWith(
        store.putSchedule(TENANT, 'x', everyMinute(due, { agent: 'ghost' })),
        'AGENT_NOT_FOUND',
      );
      await rejectsWith(store.putSchedule('nobody', 'x', everyMinute(due)), 'TENANT_NOT_FOUND');
    });

    it('an owner may only replace or delete its own agent and scope’s schedule', async () => {
      const { store } = await harness.fresh();
      const due = new Date(Date.now() + 60_000).toISOString();
      await store.putSchedule(TENANT, 'mine', everyMinute(due, { scope: 'chat-1' }));
      await rejectsWith(
        store.putSchedule(TENANT, 'mine', everyMinute(due, { scope: 'chat-2' }), {
          agent: AGENT,
          scope: 'chat-2',
        }),
        'SCHEDULE_NOT_FOUND',
      );
      assert.equal(
        await store.deleteSchedule(TENANT, 'mine', { agent: AGENT, scope: 'chat-2' }),
        false,
      );
      assert.ok(await store.getSchedule(TENANT, 'mine'));
      assert.equal(
        await store.deleteSchedule(TENANT, 'mine', { agent: AGENT, scope: 'chat-1' }),
        true,
      );
    });

    it('due schedules come from the store clock; a fire enqueues and advances in one step, exactly once', async () => {
      const { store, clock } = await harness.fresh();
      const dueAt = new Date(clock.now() + 1000).toISOString();
      await store.putSchedule(TENANT, 'tick', everyMinute(dueAt));
      assert.deepEqual(await store.dueSchedules(10), []);
      clock.advance(1000);
      const [due] = await store.dueSchedules(10);
      assert.ok(due);
      const next = new Date(clock.now() + 60_000).toISOString();
      const fire = {
        mode: 'due' as const,
        tenant: TENANT,
        name: 'tick',
        revision: due.revision,
        expected_next_fire_at: dueAt,
        run: turn({ source: 'schedule', scope: 'daily', request_id: `schedule:tick:${dueAt}` }),
        next_fire_at: next,
        note: null,
      };
      const fired = await store.fireSchedule(fire);
      assert.equal(fired.outcome, 'fired');
      assert.ok(fired.run);
      assert.equal(fired.run.source, 'schedule');
      assert.equal(fired.schedule?.next_fire_at, next);
      assert.equal(fired.schedule?.last_run_id, fired.run.run_id);
      // A second scheduler that read the same due row is refused: no second run.
      const again = await store.fireSchedule({
        ...fire,
        run: turn({ source: 'schedule', scope: 'daily', request_id: `schedule:tick:${dueAt}` }),
      });
      assert.equal(again.outcome, 'stale');
      assert.equal((await store.listRuns(TENANT, { source: 'schedule' }, 50)).items.length, 1);
      assert.deepEqual(await store.dueSchedules(10), []);
    });

    it('a misfire skipped without a run still advances; a fired `at` disables itself', async () => {
      const { store, clock } = await harness.fresh();
      const dueAt = new Date(clock.now()).toISOString();
      const { schedule } = await store.putSchedule(
        TENANT,
        'once',
        everyMinute(dueAt, { timing: { kind: 'at', at: dueAt } }),
      );
      const skipped = await store.fireSchedule({
        mode: 'due',
        tenant: TENANT,
        name: 'once',
        revision: schedule.revision,
        expected_next_fire_at: dueAt,
        run: null,
        next_fire_at: null,
        note: 'missed while down',
      });
      assert.equal(skipped.outcome, 'skipped');
      assert.equal(skipped.run, null);
      assert.equal(skipped.schedule?.enabled, false);
      assert.equal(skipped.schedule?.next_fire_at, null);
      assert.equal(skipped.schedule?.last_error, 'missed while down');
      assert.equal((await store.listRuns(TENANT, {}, 50)).items.length, 0);
    });

    it('a schedule whose agent is gone is disabled with last_error, and no run is made', async () => {
      const { store, clock } = await harness.fresh();
      await store.putAgent(TENANT, 'temp', agentSpec());
      const dueAt = new Date(clock.now()).toISOString();
      const { schedule } = await store.putSchedule(
        TENANT,
        'orphan',
        everyMinute(dueAt, { agent: 'temp' }),
      );
      await store.deleteAgent(TENANT, 'temp');
      const current = await store.getSchedule(TENANT, 'orphan');
      assert.ok(current);
      if (current.enabled) {
        // The backend disables at the next fire instead of inside deleteAgent.
        const result = await store.fireSchedule({
          mode: 'due',
          tenant: TENANT,
          name: 'orphan',
          revision: schedule.revision,
          expected_next_fire_at: dueAt,
          run: turn({ agent: 'temp', source: 'schedule', request_id: `schedule:orphan:${dueAt}` }),
          next_fire_at: new Date(clock.now() + 60_000).toISOString(),
          note: null,
        });
        assert.equal(result.outcome, 'agent_missing');
      }
      const after = await store.getSchedule(TENANT, 'orphan');
      assert.equal(after?.enabled, false);
      assert.ok(after?.last_error);
      assert.equal((await store.listRuns(TENANT, {}, 50)).items.length, 0);
    });

    it('a manual trigger runs now, deduplicated by its request_id, and leaves next_fire_at alone', async () => {
      const { store, clock } = await harness.fresh();
      const dueAt = new Date(clock.now() + 3_600_000).toISOString();
      await store.putSchedule(TENANT, 'manual', everyMinute(dueAt));
      const input = {
        mode: 'manual' as const,
        tenant: TENANT,
        name: 'manual',
        run: turn({ source: 'schedule', scope: 'daily', request_id: 'trigger-1' }),
      };
      const first = await store.fireSchedule(input);
      assert.equal(first.outcome, 'fired');
      assert.equal(first.deduplicated, false);
      const second = await store.fireSchedule({
        ...input,
        run: turn({ source: 'schedule', scope: 'daily', request_id: 'trigger-1' }),
      });
      assert.equal(second.deduplicated, true);
      assert.equal(second.run?.run_id, first.run?.run_id);
      assert.equal(second.schedule?.next_fire_at, dueAt);
      await rejectsWith(store.fireSchedule({ ...input, name: 'missing' }), 'SCHEDULE_NOT_FOUND');
    });
  });
}
