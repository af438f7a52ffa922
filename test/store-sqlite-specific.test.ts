// SQLite-only properties: asserted settings, migrations and the refusal of a newer
// database, the data-dir lock (also across a SIGKILL), integrity after a workload,
// claim races with real parallelism (child processes), and the seeded bugs that prove
// the fencing and atomicity tests can fail.
//
// This file doubles as the child program of those tests: KEEL_STORE_TEST_ROLE selects
// a role instead of registering tests.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
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
} from '../src/store/conformance/harness.ts';
import { openConnection } from '../src/store/sqlite/connection.ts';
import type { SqliteStore, SqliteStoreOptions } from '../src/store/sqlite/index.ts';
import { deliveryBackoffMs, migrateSqlite, openSqliteStore } from '../src/store/sqlite/index.ts';
import { staleAndCurrent } from '../src/store/conformance/lifecycle.suite.ts';

const ROLE = process.env.KEEL_STORE_TEST_ROLE;
const THIS_FILE = fileURLToPath(import.meta.url);

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

function spawnRole(role: string, env: Record<string, string>): ChildProcess {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, KEEL_STORE_TEST_ROLE: role, ...env };
  // Without this the child would think it is a node:test worker.
  delete childEnv.NODE_TEST_CONTEXT;
  return spawn(process.execPath, ['--import', 'tsx', THIS_FILE], {
    env: childEnv,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
}

function untilReady(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString('utf8').includes('ready')) resolve();
    });
    child.on('exit', () => reject(new Error('child exited before it was ready')));
  });
}

function outputOf(child: ChildProcess): Promise<{ code: number | null; stdout: string }> {
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout })));
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

// ---- child roles -------------------------------------------------------------------

async function holdLock(): Promise<void> {
  await openSqliteStore({ path: process.env.KEEL_DB ?? '', durability: 'full' });
  process.stdout.write('ready\n');
  setInterval(() => undefined, 60_000);
}

async function claimInALoop(): Promise<void> {
  const store = await openSqliteStore({
    path: process.env.KEEL_DB ?? '',
    durability: 'process',
    exclusiveLock: false,
  });
  const owner = process.env.KEEL_CLAIMER ?? 'claimer';
  const claims: string[] = [];
  // Start together: the parent says go once every claimer has opened the store.
  process.stdout.write('ready\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  process.stdin.pause();
  for (;;) {
    const claimed = await store.claimNextRun({ owner, lease_ms: 60_000 });
    if (!claimed) {
      const { runs_by_status: runs } = await store.stats();
      if (runs.queued === 0 && runs.running === 0) break;
      continue;
    }
    claims.push(claimed.run.run_id);
    await store.appendProgress(fenceOf(claimed), { steps: 1 });
    await store.finalizeRun(fenceOf(claimed), succeeded('ok'));
  }
  await store.close();
  process.stdout.write(`${JSON.stringify(claims)}\n`);
}

// ---- tests -------------------------------------------------------------------------

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
      });
      assert.equal(full.kind, 'sqlite');
      assert.match(full.description, /synchronous=FULL/);
      await full.close();
      await full.close();
      const normal = await openSqliteStore({ path: fresh(), durability: 'process' });
      assert.equal(normal.settings().synchronous, 1);
      await normal.close();
    });

    it('refuses a connection that does not take WAL, naming the setting', () => {
      assert.throws(
        () => openConnection({ path: ':memory:', durability: 'full' }),
        (error: unknown) =>
          isKeelError(error, 'STORE_SETTINGS_INVALID') && /journal_mode/.test(error.message),
      );
    });

    it('applies migrations once and records them', async () => {
      const path = fresh();
      const store = await openSqliteStore({ path, durability: 'full' });
      assert.deepEqual(await store.migrationStatus(), { current: 1, latest: 1 });
      await store.close();
      const again = await openSqliteStore({ path, durability: 'full' });
      await again.close();
      const raw = new Database(path, { readonly: true });
      const rows = raw.prepare('SELECT version, name FROM schema_migrations').all();
      raw.close();
      assert.deepEqual(rows, [{ version: 1, name: 'initial' }]);
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
      assert.deepEqual(before.pending, [{ version: 1, name: 'initial' }]);
      assert.equal(existsSync(path), false);
      const applied = await migrateSqlite(path, { check: false });
      assert.equal(applied.current, 1);
      assert.deepEqual(applied.pending, []);
      assert.equal(applied.applied[0]?.name, 'initial');
      const after = await migrateSqlite(path, { check: true });
      assert.deepEqual([after.current, after.latest, after.pending.length], [1, 1, 0]);
      const store = await openSqliteStore({ path, durability: 'full' });
      await expectCode(migrateSqlite(path, { check: false }), 'DATA_DIR_LOCKED');
      await store.close();
    });
  });

  describe('sqlite: the data-dir lock', () => {
    it('a second open in this process fails with DATA_DIR_LOCKED naming the dir; close releases it', async () => {
      const path = fresh();
      const first = await openSqliteStore({ path, durability: 'full' });
      const error = await expectCode(
        openSqliteStore({ path, durability: 'full' }),
        'DATA_DIR_LOCKED',
      );
      assert.ok(error.message.includes(join(path, '..')), error.message);
      await first.close();
      const second = await openSqliteStore({ path, durability: 'full' });
      await second.close();
    });

    it('a SIGKILLed owner leaves no lock behind', async () => {
      const path = fresh();
      const child = spawnRole('lock-holder', { KEEL_DB: path });
      const exited = outputOf(child);
      await untilReady(child);
      await expectCode(openSqliteStore({ path, durability: 'full' }), 'DATA_DIR_LOCKED');
      child.kill('SIGKILL');
      await exited;
      const store = await openSqliteStore({ path, durability: 'full' });
      assert.equal((await store.migrationStatus()).current, 1);
      await store.close();
    });
  });

  describe('sqlite: parallel claimers and integrity', () => {
    it('claimers in separate processes never double-claim', async () => {
      const path = fresh();
      const store = await seeded({ path, durability: 'process' });
      const lanes = 150;
      const perLane = 4;
      for (let round = 0; round < perLane; round += 1) {
        for (let lane = 0; lane < lanes; lane += 1) {
          await store.enqueueRun(turn({ scope: `lane-${lane}` }));
        }
      }
      const claimers = 4;
      const children = Array.from({ length: claimers }, (_, index) =>
        spawnRole('claimer', { KEEL_DB: path, KEEL_CLAIMER: `c${index}` }),
      );
      const outputs = children.map((child) => outputOf(child));
      await Promise.all(children.map((child) => untilReady(child)));
      const started = Date.now();
      for (const child of children) child.stdin?.end('go\n');
      const results = await Promise.all(outputs);
      const elapsed = Date.now() - started;
      const perRun = new Map<string, number>();
      const perClaimer: number[] = [];
      for (const { code, stdout } of results) {
        assert.equal(code, 0);
        const claims = JSON.parse(stdout.trim().split('\n').at(-1) ?? '[]') as string[];
        perClaimer.push(claims.length);
        for (const runId of claims) perRun.set(runId, (perRun.get(runId) ?? 0) + 1);
      }
      const total = perClaimer.reduce((sum, count) => sum + count, 0);
      const double = [...perRun.values()].filter((count) => count > 1).length;
      console.log(
        `claim-race[sqlite] claimers=${claimers} runs=${lanes * perLane} claims=${total} double=${double} per_claimer=${perClaimer.join('/')} ms=${elapsed}`,
      );
      assert.equal(double, 0);
      assert.equal(perRun.size, lanes * perLane);
      assert.equal(total, lanes * perLane);
      await store.close();
      // Within each lane, every run started after the previous one finished (FIFO, no overlap).
      const raw = new Database(path, { readonly: true });
      const rows = raw
        .prepare(
          'SELECT scope, status, attempt, started_at, finished_at FROM runs ORDER BY queue_pos',
        )
        .all() as {
        scope: string;
        status: string;
        attempt: number;
        started_at: number;
        finished_at: number;
      }[];
      const lastFinish = new Map<string, number>();
      for (const row of rows) {
        assert.equal(row.status, 'succeeded');
        assert.equal(row.attempt, 1);
        assert.ok(row.started_at >= (lastFinish.get(row.scope) ?? 0), `overlap in ${row.scope}`);
        lastFinish.set(row.scope, row.finished_at);
      }
      assert.equal(raw.pragma('integrity_check', { simple: true }), 'ok');
      raw.close();
    });

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
      const store = await seeded({ path: fresh(), now: clock.now, seededBugs: ['no_fencing'] });
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
      const store = await seeded({
        path: fresh(),
        failpoints: throwAt('finalize.between'),
        seededBugs: ['split_finalize'],
      });
      await store.enqueueRun(turn({ delivery: { destination: 'tg:1' } }));
      const claimed = await claimOrFail(store);
      await assert.rejects(store.finalizeRun(fenceOf(claimed), succeeded('half')), /between/);
      const run = await store.getRun(TENANT, claimed.run.run_id);
      assert.equal(run?.status, 'succeeded');
      assert.equal(await store.getThread(TENANT, AGENT, 's1'), null);
      assert.equal((await store.listDeliveries(TENANT, {}, 10)).items.length, 0);
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

if (ROLE === 'lock-holder') await holdLock();
else if (ROLE === 'claimer') await claimInALoop();
else defineTests();
