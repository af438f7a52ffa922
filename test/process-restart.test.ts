// `keel serve` as a real child process: SIGKILL mid-run and restart on the same data
// dir (resume), failpoint kills at the transaction boundaries around a step and
// finalization (exactly once), SIGTERM (exit 0, lease released), `keel migrate --check`.

import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import type { Run, TraceEvent } from '../src/types.ts';
import { KEEL_TEST_SERVE } from './helpers/keel-test-serve-entry.ts';
import { waitFor } from './helpers/wait-for.ts';
import { freePort } from '../src/cli/demo-processes.ts';
import { KEEL_CLI } from './helpers/keel-cli.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const TENANT = 'proc';
const dirs: string[] = [];
/** Every child spawned, so a failing test never leaves a server behind. */
const children = new Set<ChildProcess>();
const figures = { kills: 0, lost: 0, resumed: 0, duplicateTurns: 0 };

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'keel-process-'));
  dirs.push(dir);
  return dir;
}

interface Served {
  child: ChildProcess;
  url: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
}

/** Env without any KEEL_* a developer's shell may carry, plus the test's own. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('KEEL_')) env[key] = value;
  }
  return { ...env, KEEL_LOG_LEVEL: 'warn', ...extra };
}

function runCli(
  args: string[],
  env: Record<string, string> = {},
  entry: readonly string[] = KEEL_CLI,
): ChildProcess {
  const child = spawn(process.execPath, [...entry, ...args], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

function exitOf(
  child: ChildProcess,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode });
    } else child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

async function serve(dataDir: string, env: Record<string, string> = {}): Promise<Served> {
  const port = await freePort();
  const flags = ['--listen', `127.0.0.1:${port}`, '--data-dir', dataDir];
  // Fault points exist only behind the test-only entry; the real `keel serve` refuses them.
  const child =
    env.KEEL_FAILPOINTS === undefined
      ? runCli(['serve', ...flags], env)
      : runCli(flags, env, KEEL_TEST_SERVE);
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = exitOf(child);
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no ready line; stderr: ${err}`)), 15_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /^keel listening on (http:\/\/\S+) \(store sqlite:(.+)\)$/m.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void exited.then(() => reject(new Error(`serve exited early; stderr: ${err}`)));
  });
  return { child, url, exited, stderr: () => err };
}

// Loose JSON for assertions.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function call(url: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${url}${path}`, {
    method,
    // POST/PUT/PATCH name their content type even without a body (cross-site guard).
    headers: method === 'GET' ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

async function setup(url: string): Promise<void> {
  assert.ok([200, 201].includes((await call(url, 'POST', '/v1/tenants', { name: TENANT })).status));
  const agent = await call(url, 'PUT', `/v1/tenants/${TENANT}/agents/a`, { model: 'fixture/echo' });
  assert.ok([200, 201].includes(agent.status));
}

function turn(text: string, requestId: string, scope = 's'): Record<string, unknown> {
  return { agent: 'a', scope, payload: { text }, request_id: requestId };
}

async function getRun(url: string, runId: string): Promise<Run> {
  return (await call(url, 'GET', `/v1/tenants/${TENANT}/runs/${runId}`)).body.run as Run;
}

async function waitRun(url: string, runId: string): Promise<Run> {
  const result = await call(
    url,
    'GET',
    `/v1/tenants/${TENANT}/runs/${runId}/wait?timeout_ms=20000`,
  );
  assert.equal(result.body.timed_out, false, `run ${runId} did not finish`);
  return result.body.run as Run;
}

async function trace(url: string, runId: string): Promise<TraceEvent[]> {
  return (await call(url, 'GET', `/v1/tenants/${TENANT}/runs/${runId}/trace?limit=1000`)).body
    .events as TraceEvent[];
}

async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  await waitFor('the condition', check, { timeoutMs, everyMs: 20 });
}

async function kill(served: Served): Promise<void> {
  served.child.kill('SIGKILL');
  assert.equal((await served.exited).signal, 'SIGKILL');
  figures.kills += 1;
}

async function terminate(served: Served): Promise<number> {
  const started = Date.now();
  served.child.kill('SIGTERM');
  const { code } = await served.exited;
  assert.equal(code, 0, `serve exited ${code}: ${served.stderr()}`);
  return Date.now() - started;
}

/** Exactly-once checks on the stopped data dir: one assistant entry per step, one turn. */
async function checkOnce(dataDir: string, runId: string, scope: string): Promise<void> {
  const store = await openSqliteStore({ path: join(dataDir, 'keel.db'), durability: 'full' });
  try {
    const run = await store.getRun(TENANT, runId);
    assert.equal(run?.status, 'succeeded');
    if (!run?.output) figures.lost += 1;
    const entries = await store.loadEntries(runId);
    const assistants = entries.filter((entry) => entry.kind === 'assistant').length;
    assert.equal(assistants, run?.steps, 'one assistant entry per step');
    assert.equal(entries.filter((entry) => entry.kind === 'user').length, 1);
    const thread = await store.getThread(TENANT, 'a', scope);
    const turns = thread?.messages.filter((message) => message.run_id === runId).length ?? 0;
    if (turns !== 2) figures.duplicateTurns += 1;
    assert.equal(turns, 2, 'the turn is in the thread exactly once (user + assistant)');
  } finally {
    await store.close();
  }
}

describe('keel serve as a process', () => {
  after(() => {
    for (const child of children) child.kill('SIGKILL');
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    console.log(
      `restart kills=${figures.kills} lost=${figures.lost} resumed=${figures.resumed} dup_turns=${figures.duplicateTurns}`,
    );
  });

  it('SIGKILL mid-run: the restarted process resumes the run (attempt 2), dedup holds', async () => {
    const dataDir = tempDir();
    const first = await serve(dataDir);
    await setup(first.url);
    const body = turn('@sleep 4000\nsurvive', 'kill-1');
    const submitted = await call(first.url, 'POST', `/v1/tenants/${TENANT}/turns`, body);
    assert.equal(submitted.status, 202);
    const runId = submitted.body.run_id as string;
    await until(async () => (await getRun(first.url, runId)).status === 'running');
    await kill(first);

    const second = await serve(dataDir);
    try {
      const run = await waitRun(second.url, runId);
      assert.equal(run.status, 'succeeded');
      assert.equal(run.attempt, 2);
      assert.deepEqual(run.output, { reply: 'echo: survive' });
      const resumed = (await trace(second.url, runId)).filter((e) => e.type === 'run.resumed');
      assert.equal(resumed.length, 1);
      assert.equal(resumed[0]?.data.attempt, 2);
      figures.resumed += 1;

      const again = await call(second.url, 'POST', `/v1/tenants/${TENANT}/turns`, body);
      assert.equal(again.status, 200);
      assert.equal(again.body.deduplicated, true);
      assert.equal(again.body.run_id, runId);
    } finally {
      await terminate(second);
    }
    await checkOnce(dataDir, runId, 's');
  });

  for (const point of ['model.after_response', 'finalize.after_commit']) {
    it(`failpoint ${point}=kill: after restart the run is complete exactly once`, async () => {
      const dataDir = tempDir();
      // Setup makes no model call and finalizes nothing: the point fires only in the run.
      const doomed = await serve(dataDir, {
        KEEL_TEST_FAILPOINTS: '1',
        KEEL_FAILPOINTS: `${point}=kill`,
      });
      await setup(doomed.url);
      const scope = `fp-${point}`;
      const text = '@call clock_now {}\n@call calc_eval {"expression":"2*3"}\nonce';
      const submitted = await call(
        doomed.url,
        'POST',
        `/v1/tenants/${TENANT}/turns`,
        turn(text, `fp-${point}`, scope),
      );
      const runId = submitted.body.run_id as string;
      assert.equal((await doomed.exited).signal, 'SIGKILL', 'the failpoint killed the process');
      figures.kills += 1;

      const restarted = await serve(dataDir);
      try {
        const run = await waitRun(restarted.url, runId);
        assert.equal(run.status, 'succeeded');
        assert.equal(run.steps, 3);
        assert.match(
          String(run.output?.reply),
          /^echo: once\nclock_now: \{.*\}\ncalc_eval: \{"expression":"2\*3","value":6\}$/,
        );
        const events = await trace(restarted.url, runId);
        assert.equal(events.filter((e) => e.type === 'run.succeeded').length, 1);
        assert.equal(events.filter((e) => e.type === 'model.response').length, 3);
        if (point === 'model.after_response') {
          assert.equal(run.attempt, 2);
          figures.resumed += 1;
        }
      } finally {
        await terminate(restarted);
      }
      await checkOnce(dataDir, runId, scope);
    });
  }

  it('SIGTERM: exits 0 promptly and releases the lease of the in-flight run', async () => {
    const dataDir = tempDir();
    const served = await serve(dataDir);
    await setup(served.url);
    const submitted = await call(
      served.url,
      'POST',
      `/v1/tenants/${TENANT}/turns`,
      turn('@sleep 30000\nlong', 'term-1'),
    );
    const runId = submitted.body.run_id as string;
    await until(async () => (await getRun(served.url, runId)).status === 'running');
    const tookMs = await terminate(served);
    assert.ok(tookMs < 3000, `SIGTERM took ${tookMs} ms`);

    // No startup reclaim here: the lease must already be released for this claim to work.
    const store = await openSqliteStore({ path: join(dataDir, 'keel.db'), durability: 'full' });
    try {
      const claimed = await store.claimNextRun({ owner: 'test', lease_ms: 1000 });
      assert.equal(claimed?.run.run_id, runId);
      assert.equal(claimed?.run.attempt, 2);
    } finally {
      await store.close();
    }
  });

  it('keel migrate --check: non-zero on a fresh data dir, zero once migrated; usage errors exit 2', async () => {
    const dataDir = tempDir();
    const check = async (): Promise<number | null> =>
      (await exitOf(runCli(['migrate', '--check', '--data-dir', dataDir]))).code;
    assert.equal(await check(), 1);
    const migrate = runCli(['migrate', '--data-dir', dataDir]);
    let out = '';
    migrate.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    assert.equal((await exitOf(migrate)).code, 0);
    assert.match(out, /applied 1 /);
    assert.equal(await check(), 0);
    assert.equal((await exitOf(runCli(['migrate', '--bogus']))).code, 2);
    assert.equal((await exitOf(runCli(['no-such-command']))).code, 2);
  });
});
