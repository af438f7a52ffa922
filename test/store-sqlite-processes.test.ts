// SQLite properties that need other processes: the data-dir lock (also across a
// SIGKILL of its owner) and claimers racing with real parallelism.
//
// This file doubles as the child program of those tests: KEEL_STORE_TEST_ROLE selects
// a role instead of registering tests.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { isKeelError } from '../src/errors.ts';
import { agentSpec, AGENT, fenceOf, succeeded, TENANT, turn } from './store-conformance/harness.ts';
import type { SqliteStore, SqliteStoreOptions } from '../src/store/sqlite/index.ts';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import { TS_IMPORT } from './helpers/ts-import.ts';

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

function spawnRole(role: string, env: Record<string, string>): ChildProcess {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, KEEL_STORE_TEST_ROLE: role, ...env };
  // Without this the child would think it is a node:test worker.
  delete childEnv.NODE_TEST_CONTEXT;
  return spawn(process.execPath, [...TS_IMPORT, THIS_FILE], {
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
      // Fully migrated, whatever the number of migration files.
      const status = await store.migrationStatus();
      assert.equal(status.current, status.latest);
      assert.ok(status.current >= 1);
      await store.close();
    });
  });

  describe('sqlite: parallel claimers', () => {
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
  });
}

if (ROLE === 'lock-holder') await holdLock();
else if (ROLE === 'claimer') await claimInALoop();
else defineTests();
