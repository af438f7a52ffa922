// A fresh SQLite store on a TestClock with tenant t1 and agent a1, for scheduler tests
// (peer connections for two-scheduler races; failpoints for crash-between tests).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Failpoints } from '../../src/failpoints.ts';
import { TestClock } from '../store-conformance/index.ts';
import type { SqliteStore } from '../../src/store/sqlite/index.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { scheduleWriteOf } from '../../src/schedules/schedule-input.ts';
import type { ScheduleDocument } from '../../src/schedules/schedule-input.ts';
import type { Store } from '../../src/store/store.ts';
import { agentSpec } from './agent-spec.ts';

export interface ScheduleFixture {
  store: SqliteStore;
  clock: TestClock;
  path: string;
  peer(failpoints?: Failpoints): Promise<SqliteStore>;
  put(name: string, doc: Partial<ScheduleDocument>): ReturnType<Store['putSchedule']>;
  close(): Promise<void>;
}

export async function scheduleFixture(
  start: string,
  failpoints?: Failpoints,
): Promise<ScheduleFixture> {
  const dir = await mkdtemp(join(tmpdir(), 'keel-schedules-'));
  const path = join(dir, 'keel.db');
  const clock = new TestClock(Date.parse(start));
  const opened: SqliteStore[] = [];
  const store = await openSqliteStore({
    path,
    durability: 'process',
    now: clock.now,
    exclusiveLock: false,
    ...(failpoints ? { failpoints } : {}),
  });
  opened.push(store);
  await store.createTenant('t1', {});
  await store.putAgent('t1', 'a1', agentSpec());
  return {
    store,
    clock,
    path,
    async peer(peerFailpoints) {
      const peer = await openSqliteStore({
        path,
        durability: 'process',
        now: clock.now,
        exclusiveLock: false,
        ...(peerFailpoints ? { failpoints: peerFailpoints } : {}),
      });
      opened.push(peer);
      return peer;
    },
    put(name, doc) {
      const write = scheduleWriteOf(
        { agent: 'a1', scope: 's1', payload: { text: name }, ...doc },
        clock.now(),
      );
      return store.putSchedule('t1', name, write);
    },
    async close() {
      for (const each of opened) await each.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Every run of the tenant, oldest first, as [request_id, source]. */
export async function scheduleRuns(store: Store): Promise<string[]> {
  const page = await store.listRuns('t1', { source: 'schedule' }, 200);
  return page.items.map((run) => run.request_id ?? '(none)').reverse();
}
