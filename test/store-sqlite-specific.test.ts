// SQLite-only properties: asserted settings, migrations and the refusal of a newer
// database, claim cost, integrity after a workload, fault points, and the seeded bugs
// that prove the fencing and atomicity tests can fail. The lock and the multi-process
// claim race live in store-sqlite-processes.test.ts.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { preparedDuring } from './helpers/sqlite-prepared.ts';
import type { Failpoints } from '../src/failpoints.ts';
import { isKeelError } from '../src/errors.ts';
import {
  agentSpec,
  AGENT,
  claimOrFail,
  fenceOf,
  LEASE_MS,
  succeeded,
  TENANT,
  TestClock,
  turn,
} from './store-conformance/harness.ts';
import {
  openConnection,
  PAGE_BYTES,
  WAL_CHECKPOINT_BYTES,
  WRITER_CACHE_KIB,
} from '../src/store/sqlite/connection.ts';
import { loadMigrations } from '../src/store/sqlite/migrations.ts';
import type { SqliteStore, SqliteStoreOptions } from '../src/store/sqlite/index.ts';
import { deliveryBackoffMs, migrateSqlite, openSqliteStore } from '../src/store/sqlite/index.ts';
import { staleAndCurrent } from './store-conformance/lifecycle.suite.ts';
import { withSplitFinalize, withoutFencing } from './helpers/seeded-bugs.ts';

function tempDir(): string {
  return mkdtempSync(join(os.tmpdir(), 'keel-store-sqlite-'));
}

async function seeded(
  options: Partial<SqliteStoreOptions> & { path: string },
): Promise<SqliteStore> {
  const store = await openSqliteStore({ durability: 'full', ...options });
  await store.createTenant(TENANT, {});
  await store.putAgent(TENANT, AGENT, agentSpec());
  return store;
}

function throwAt(point: string): Failpoints {
  return {
    hit(name: string): void {
      if (name === point) throw new Error(`failpoint ${name}`);
    },
  };
}

async function expectCode(promise: Promise<unknown>, code: string): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    assert.ok(isKeelError(error), `expected KeelError ${code}, got ${String(error)}`);
    assert.equal(error.code, code);
    return error;
  }
  throw new assert.AssertionError({ message: `expected ${code}, but it resolved` });
}

function defineTests(): void {
  const dirs: string[] = [];
  const fresh = (): string => {
    const dir = tempDir();
    dirs.push(dir);
    return join(dir, 'keel.db');
  };
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  describe('sqlite: settings and migrations', () => {
    it('asserts WAL, synchronous FULL or NORMAL, foreign keys and busy_timeout', async () => {
      const full = await openSqliteStore({ path: fresh(), durability: 'full' });
      assert.deepEqual(full.settings(), {
        journal_mode: 'wal',
        synchronous: 2,
        foreign_keys: 1,
        busy_timeout: 5000,
        page_size: PAGE_BYTES,
        // A 4 MiB WAL between checkpoints whatever the page size (SQLite's default,
        // 1000 pages, would checkpoint every 1 MiB of small pages).
        wal_autocheckpoint: WAL_CHECKPOINT_BYTES / PAGE_BYTES,
        // 2 MiB of cache, not better-sqlite3's 16 MiB: a commit after a page split scans
        // the cache's whole hash table (connection.ts).
        cache_size: -WRITER_CACHE_KIB,
      });
      assert.equal(WRITER_CACHE_KIB, 2000);
      assert.equal(full.kind, 'sqlite');
      assert.match(full.description, /synchronous=FULL/);
      await full.close();
      await full.close();
      const normal = await openSqliteStore({ path: fresh(), durability: 'process' });
      assert.equal(normal.settings().synchronous, 1);
      await normal.close();
    });

    it("creates small pages (WAL bytes per commit) and keeps an existing file's own", async () => {
      assert.equal(PAGE_BYTES, 1024);
      // A database created before the change (SQLite's default 4 KiB pages) opens as is.
      const path = fresh();
      const old = new Database(path);
      old.pragma('page_size = 4096');
      old.pragma('journal_mode = WAL');
      old.close();
      const store = await openSqliteStore({ path, durability: 'process' });
      assert.equal(store.settings().page_size, 4096);
      assert.equal(store.settings().wal_autocheckpoint, WAL_CHECKPOINT_BYTES / 4096);
      assert.deepEqual(await store.migrationStatus(), { current: latest, latest });
      await store.close();
    });

    it('refuses a connection that does not take WAL, naming the setting', () => {
      assert.throws(
        () => openConnection({ path: ':memory:', durability: 'full' }),
        (error: unknown) =>
          isKeelError(error, 'STORE_SETTINGS_INVALID') && /journal_mode/.test(error.message),
      );
    });

    // Every migration file, in order: later issues add migrations without touching this test.
    const allMigrations = loadMigrations().map(({ version, name }) => ({ version, name }));
    const latest = allMigrations.length;

    it('applies migrations once and records them', async () => {
      const path = fresh();
      const store = await openSqliteStore({ path, durability: 'full' });
      assert.deepEqual(await store.migrationStatus(), { current: latest, latest });
      await store.close();
      const again = await openSqliteStore({ path, durability: 'full' });
      await again.close();
      const raw = new Database(path, { readonly: true });
      const rows = raw.prepare('SELECT version, name FROM schema_migrations').all();
      raw.close();
      assert.deepEqual(rows, allMigrations);
      assert.deepEqual(allMigrations[0], { version: 1, name: 'initial' });
    });

    it('refuses a database from a newer keel and leaves its data untouched', async () => {
      const path = fresh();
      const store = await seeded({ path });
      await store.close();
      const raw = new Database(path);
      raw
        .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, ?, ?)')
        .run('from_the_future', Date.now());
      raw.close();
      const error = await expectCode(
        openSqliteStore({ path, durability: 'full' }),
        'STORE_SCHEMA_NEWER',
      );
      assert.match(error.message, /999/);
      assert.match(error.message, /upgrade keel/);
      assert.doesNotMatch(error.message, /reset/i);
      await expectCode(migrateSqlite(path, { check: true }), 'STORE_SCHEMA_NEWER');
      await expectCode(migrateSqlite(path, { check: false }), 'STORE_SCHEMA_NEWER');
      const check = new Database(path, { readonly: true });
      assert.deepEqual(check.prepare('SELECT name FROM tenants').all(), [{ name: TENANT }]);
      assert.equal(
        (check.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number }).v,
        999,
      );
      check.close();
      // The lock was released on the refusal: another open is refused for the schema only.
      await expectCode(openSqliteStore({ path, durability: 'full' }), 'STORE_SCHEMA_NEWER');
    });

    it('migrateSqlite reports pending migrations without writing, then applies them', async () => {
      const path = fresh();
      const before = await migrateSqlite(path, { check: true });
      assert.equal(before.current, 0);
      assert.deepEqual(before.pending, allMigrations);
      assert.equal(existsSync(path), false);
      const applied = await migrateSqlite(path, { check: false });
      assert.equal(applied.current, latest);
      assert.deepEqual(applied.pending, []);
      assert.equal(applied.applied[0]?.name, 'initial');
      const after = await migrateSqlite(path, { check: true });
      assert.deepEqual([after.current, after.latest, after.pending.length], [latest, latest, 0]);
      const store = await openSqliteStore({ path, durability: 'full' });
      await expectCode(migrateSqlite(path, { check: false }), 'DATA_DIR_LOCKED');
      await store.close();
    });
  });

  describe('sqlite: claim cost and integrity', () => {
    it('a claim stays cheap with a long busy queue in front of an idle lane', async () => {
      const path = fresh();
      const store = await seeded({ path, durability: 'process' });
      const queued = 5000;
      for (let index = 0; index < queued; index += 1) {
        await store.enqueueRun(turn({ scope: 'busy' }));
      }
      const idle = await store.enqueueRun(turn({ scope: 'idle' }));
      await claimOrFail(store);
      const started = performance.now();
      const claimed = await claimOrFail(store);
      const claimMs = performance.now() - started;
      console.log(`claim-scan[sqlite] queued=${queued} claim_ms=${claimMs.toFixed(2)}`);
      assert.equal(claimed.run.run_id, idle.run.run_id);
      assert.ok(claimMs < 500, `claim took ${claimMs} ms`);
      await store.close();
    });

    it('integrity_check and foreign_key_check are clean after a mixed workload', async () => {
      const path = fresh();
      const clock = new TestClock();
      const store = await seeded({ path, now: clock.now });
      for (let index = 0; index < 30; index += 1) {
        await store.enqueueRun(
          turn({ scope: `s${index % 5}`, delivery: index % 2 ? { destination: 'tg:1' } : null }),
        );
      }
      for (let index = 0; index < 30; index += 1) {
        const claimed = await store.claimNextRun({ owner: 'w', lease_ms: LEASE_MS });
        if (!claimed) break;
        if (index % 7 === 0) await store.cancelRun(TENANT, claimed.run.run_id, null);
        else await store.finalizeRun(fenceOf(claimed), succeeded('ok'));
      }
      const deliveries = await store.claimDeliveries(TENANT, {
        limit: 5,
        lease_ms: 1000,
        max_attempts: 3,
      });
      for (const delivery of deliveries) {
        await store.ackDelivery(TENANT, delivery.delivery_id, {
          claim_token: delivery.claim_token,
          outcome: 'retry',
          max_attempts: 3,
        });
      }
      await store.deleteAgent(TENANT, AGENT);
      await store.createTenant('gone', {});
      await store.deleteTenant('gone');
      await store.close();
      const raw = new Database(path, { readonly: true });
      assert.equal(raw.pragma('integrity_check', { simple: true }), 'ok');
      assert.deepEqual(raw.pragma('foreign_key_check'), []);
      raw.close();
    });
  });

  it("a delivery claim reads the tenant's claimed and pending rows, not its delivered history", async () => {
    const path = fresh();
    const store = await seeded({ path, durability: 'process' });
    await store.enqueueRun(turn({ delivery: { destination: 'tg:1' } }));
    await store.finalizeRun(fenceOf(await claimOrFail(store)), succeeded('ok'));
    const prepared = await preparedDuring(async () => {
      const input = { limit: 5, lease_ms: 1000, max_attempts: 3 };
      assert.equal((await store.claimDeliveries(TENANT, input)).length, 1);
      await store.claimDeliveries(TENANT, { ...input, destination_prefix: 'tg:' });
    });
    await store.close();
    const reads = prepared.filter((sql) => /^\s*(UPDATE|SELECT)\b[\s\S]*\bdeliveries\b/.test(sql));
    assert.ok(reads.length >= 4, `the claims prepared ${reads.length} delivery statements`);
    const raw = new Database(path, { readonly: true });
    try {
      for (const sql of reads) {
        const values = Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => 1);
        const plan = (
          raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...values) as { detail: string }[]
        )
          .map((row) => row.detail)
          .join(' | ');
        assert.doesNotMatch(plan, /deliveries_by_tenant|SCAN (d|deliveries)\b/, `${sql}\n${plan}`);
      }
    } finally {
      raw.close();
    }
  });

  describe('sqlite: owner start-up', () => {
    it('expireAllLeases makes every running run reclaimable at once, also after a restart', async () => {
      const clock = new TestClock();
      const path = fresh();
      const store = await seeded({ path, now: clock.now });
      await store.enqueueRun(turn());
      await store.enqueueRun(turn({ scope: 's2' }));
      await claimOrFail(store);
      await claimOrFail(store);
      await store.close();
      const reopened = await openSqliteStore({ path, durability: 'full', now: clock.now });
      try {
        assert.equal(await reopened.claimNextRun({ owner: 'w', lease_ms: LEASE_MS }), null);
        assert.equal(await reopened.expireAllLeases(), 2);
        const again = [await claimOrFail(reopened), await claimOrFail(reopened)];
        assert.deepEqual(
          again.map((claimed) => claimed.run.attempt),
          [2, 2],
        );
      } finally {
        await reopened.close();
      }
    });
  });

  describe('sqlite: fault points and seeded bugs', () => {
    it('a throw before the submit commit writes nothing; after it, the replay finds the run', async () => {
      const path = fresh();
      const before = await seeded({ path, failpoints: throwAt('submit.before_commit') });
      await assert.rejects(before.enqueueRun(turn({ request_id: 'r' })), /submit.before_commit/);
      assert.equal((await before.listRuns(TENANT, {}, 10)).items.length, 0);
      await before.close();
      const afterCommit = await openSqliteStore({
        path,
        durability: 'full',
        failpoints: throwAt('submit.after_commit'),
      });
      const input = turn({ request_id: 'r' });
      await assert.rejects(afterCommit.enqueueRun(input), /submit.after_commit/);
      const replay = await afterCommit.enqueueRun({ ...input, run_id: 'other' });
      assert.equal(replay.deduplicated, true);
      assert.equal(replay.run.run_id, input.run_id);
      await afterCommit.close();
    });

    it('a throw before the finalize commit leaves the run running with no output, turn or delivery', async () => {
      const store = await seeded({ path: fresh(), failpoints: throwAt('finalize.before_commit') });
      await store.enqueueRun(turn({ delivery: { destination: 'tg:1' } }));
      const claimed = await claimOrFail(store);
      await assert.rejects(store.finalizeRun(fenceOf(claimed), succeeded('x')), /finalize/);
      const run = await store.getRun(TENANT, claimed.run.run_id);
      assert.equal(run?.status, 'running');
      assert.equal(run?.output, null);
      assert.equal(await store.getThread(TENANT, AGENT, 's1'), null);
      assert.equal((await store.listDeliveries(TENANT, {}, 10)).items.length, 0);
      const trace = await store.getTrace(TENANT, claimed.run.run_id, 0, 100);
      assert.equal(trace?.at(-1)?.type, 'run.claimed');
      await store.close();
    });

    it('a throw before the cancel commit leaves the run as it was; a running run can still finish', async () => {
      const store = await seeded({ path: fresh(), failpoints: throwAt('cancel.before_commit') });
      await store.enqueueRun(turn());
      const claimed = await claimOrFail(store);
      await assert.rejects(store.cancelRun(TENANT, claimed.run.run_id, null), /cancel/);
      assert.equal((await store.getRun(TENANT, claimed.run.run_id))?.status, 'running');
      assert.equal(await store.heartbeat(fenceOf(claimed), LEASE_MS), true);
      const done = await store.finalizeRun(fenceOf(claimed), succeeded('ok'));
      assert.equal(done.status, 'succeeded');
      await store.close();
    });

    it("seeded bug 'no_fencing': the stale attempt's write is accepted (the fencing test would fail)", async () => {
      const clock = new TestClock();
      const store = withoutFencing(await seeded({ path: fresh(), now: clock.now }));
      const { stale } = await staleAndCurrent(store, clock);
      assert.equal(await store.heartbeat(fenceOf(stale), LEASE_MS), true);
      await store.appendProgress(fenceOf(stale), {
        entries: [{ kind: 'note', body: { text: 'stale write' } }],
      });
      const finished = await store.finalizeRun(fenceOf(stale), succeeded('stale'));
      assert.deepEqual(finished.output, { reply: 'stale' });
      await store.close();
    });

    it("seeded bug 'split_finalize': a crash between the halves leaves a succeeded run without its turn", async () => {
      const path = fresh();
      const store = withSplitFinalize(await seeded({ path }), path, throwAt('finalize.between'));
      await store.enqueueRun(turn({ delivery: { destination: 'tg:1' } }));
      const claimed = await claimOrFail(store);
      await assert.rejects(store.finalizeRun(fenceOf(claimed), succeeded('half')), /between/);
      const run = await store.getRun(TENANT, claimed.run.run_id);
      assert.equal(run?.status, 'succeeded');
      assert.equal(await store.getThread(TENANT, AGENT, 's1'), null);
      assert.equal((await store.listDeliveries(TENANT, {}, 10)).items.length, 0);
      await store.close();
    });

    it("seeded bug 'split_finalize' without a crash: the run ends whole (the decorator only splits)", async () => {
      const path = fresh();
      const store = withSplitFinalize(await seeded({ path }), path, { hit: () => undefined });
      await store.enqueueRun(turn({ delivery: { destination: 'tg:1' } }));
      const claimed = await claimOrFail(store);
      const done = await store.finalizeRun(fenceOf(claimed), succeeded('whole'));
      assert.equal(done.status, 'succeeded');
      assert.equal((await store.getThread(TENANT, AGENT, 's1'))?.turns, 1);
      assert.equal((await store.listDeliveries(TENANT, {}, 10)).items.length, 1);
      await store.close();
    });

    it('the normal code ignores finalize.between: nothing partial', async () => {
      const store = await seeded({ path: fresh(), failpoints: throwAt('finalize.between') });
      await store.enqueueRun(turn({ delivery: { destination: 'tg:1' } }));
      const claimed = await claimOrFail(store);
      await store.finalizeRun(fenceOf(claimed), succeeded('whole'));
      assert.equal((await store.getThread(TENANT, AGENT, 's1'))?.turns, 1);
      assert.equal((await store.listDeliveries(TENANT, {}, 10)).items.length, 1);
      await store.close();
    });

    it('delivery backoff doubles from 1 s, caps at 5 min, and jitters by at most 20 %', () => {
      assert.equal(
        deliveryBackoffMs(1, () => 0.5),
        1000,
      );
      assert.equal(
        deliveryBackoffMs(3, () => 0.5),
        4000,
      );
      assert.equal(
        deliveryBackoffMs(30, () => 0.5),
        300_000,
      );
      assert.equal(
        deliveryBackoffMs(1, () => 0),
        800,
      );
      assert.equal(
        deliveryBackoffMs(1, () => 1),
        1200,
      );
    });
  });
}

defineTests();
