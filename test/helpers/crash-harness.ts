// Crash-test plumbing shared by the crash sweep, the random crash loop and the seeded-bug
// tests: `keel serve` as a child process (killed at a fault point or at random, restarted
// on the same data dir), the effect sink process, and the sweep's scenario, checked by
// crash-checks.ts against the stopped data dir and the sink log (docs/reliability.md I1,
// I3–I6, I9, I11).

import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import type { CrashBackend } from './crash-backend.ts';
import { sqliteCrashBackend } from './crash-backend.ts';
import type { Findings, SinkEffect } from './crash-checks.ts';
import {
  checkLaneOrder,
  checkRequestIds,
  checkRun,
  checkScopeEffects,
  checkThread,
  emptyFindings,
  runsOfScope,
} from './crash-checks.ts';

export type { Findings, SinkEffect } from './crash-checks.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
export const TENANT = 'crash';
const children = new Set<ChildProcess>();
const dirs: string[] = [];

export function tempDir(prefix = 'keel-crash-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/**
 * Inside a describe: an effect sink for its tests, started before them; after them it
 * stops and every child and temp dir goes (cleanup). Read it through the getter.
 */
export function effectSinkForSuite(): () => EffectSink {
  let sink: EffectSink | null = null;
  before(async () => {
    sink = await startEffectSink();
  });
  after(async () => {
    await sink?.stop();
    cleanup();
  });
  return () => {
    if (!sink) throw new Error('the effect sink starts before the tests of the suite');
    return sink;
  };
}

/** Kills every child still alive and removes the temp dirs. */
export function cleanup(): void {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('KEEL_')) env[key] = value;
  }
  return { ...env, KEEL_LOG_LEVEL: 'warn', ...extra };
}

type Exit = { code: number | null; signal: NodeJS.Signals | null };

function spawnTracked(args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

function exitOf(child: ChildProcess): Promise<Exit> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode });
    } else child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

function readyLine(child: ChildProcess, pattern: RegExp, what: string): Promise<string> {
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return new Promise<string>((resolve, reject) => {
    let out = '';
    // Generous: on a loaded machine tsx compiling keel at start can take tens of seconds.
    const timer = setTimeout(() => reject(new Error(`${what}: no ready line; ${err}`)), 60_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = pattern.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void exitOf(child).then(() => reject(new Error(`${what} exited early: ${err}`)));
  });
}

export interface EffectSink {
  url: string;
  effects(runId?: string): Promise<SinkEffect[]>;
  stop(): Promise<void>;
}

export async function startEffectSink(): Promise<EffectSink> {
  const log = join(tempDir('keel-sink-'), 'effects.jsonl');
  const child = spawnTracked(['test/helpers/effect-sink.ts', log], {});
  const url = await readyLine(child, /effect-sink listening on (http:\/\/\S+)/, 'effect sink');
  return {
    url,
    async effects(runId) {
      const query = runId ? `?run_id=${encodeURIComponent(runId)}` : '';
      const response = await fetch(`${url}/effects${query}`);
      return ((await response.json()) as { effects: SinkEffect[] }).effects;
    },
    async stop() {
      child.kill('SIGTERM');
      await exitOf(child);
    },
  };
}

export interface Served {
  url: string;
  pid: number;
  exited: Promise<Exit>;
  kill(): Promise<void>;
  terminate(): Promise<void>;
}

export async function serve(dataDir: string, env: Record<string, string>): Promise<Served> {
  // Port 0: keel binds a free port itself and names it in its ready line. A port picked
  // here and bound later by the child could be taken in between (EADDRINUSE under load).
  const child = spawnTracked(
    ['test/helpers/keel-test-serve.ts', '--listen', '127.0.0.1:0', '--data-dir', dataDir],
    env,
  );
  const exited = exitOf(child);
  const url = await readyLine(child, /^keel listening on (http:\/\/\S+) /m, 'keel serve');
  return {
    url,
    pid: child.pid ?? 0,
    exited,
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
    async terminate() {
      child.kill('SIGTERM');
      const { code } = await exited;
      if (code !== 0) throw new Error(`keel serve exited ${code} on SIGTERM`);
    },
  };
}

/** Loose JSON for assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

export async function call(
  url: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Loose> {
  const response = await fetch(`${url}${path}`, {
    method,
    // POST/PUT/PATCH name their content type even without a body (cross-site guard).
    headers: method === 'GET' ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

export async function setupTenant(url: string): Promise<void> {
  await call(url, 'POST', '/v1/tenants', { name: TENANT });
  const agent = await call(url, 'PUT', `/v1/tenants/${TENANT}/agents/a`, {
    model: 'fixture/echo',
  });
  if (agent.status >= 300) throw new Error(`agent: ${JSON.stringify(agent.body)}`);
}

export async function waitTerminal(url: string, runId: string): Promise<string> {
  const result = await call(
    url,
    'GET',
    `/v1/tenants/${TENANT}/runs/${runId}/wait?timeout_ms=30000`,
  );
  if (result.body.timed_out !== false) throw new Error(`run ${runId} did not finish`);
  return result.body.run.status as string;
}

export interface Scenario {
  dataDir: string;
  /** The scripted run (with a delivery destination) and its request id. */
  runId: string;
  requestId: string;
  /** A plain follow-up turn in the same scope, without a destination. */
  followUpId: string;
  scope: string;
}

/** Reads the stopped data dir and the sink log; returns what broke. */
export async function checkScenario(
  s: Scenario,
  sink: EffectSink,
  backend: CrashBackend = sqliteCrashBackend,
): Promise<Findings> {
  const f = emptyFindings();
  const store = await backend.open(s.dataDir);
  try {
    const runs = await runsOfScope(store, TENANT, s.scope);
    checkRequestIds(runs, [{ requestId: s.requestId, runId: s.runId }], f);
    const scriptedEffects = await sink.effects(s.runId);
    const followUpEffects = await sink.effects(s.followUpId);
    const policy = 'tell_model';
    const scripted = await checkRun(
      store,
      TENANT,
      { runId: s.runId, destination: true, onUncertain: policy, effects: scriptedEffects },
      f,
    );
    if (!scripted) return f;
    const followUp = await checkRun(
      store,
      TENANT,
      { runId: s.followUpId, destination: false, onUncertain: policy, effects: followUpEffects },
      f,
    );
    checkScopeEffects([...scriptedEffects, ...followUpEffects], f);
    const inOrder = followUp ? [scripted, followUp] : [scripted];
    checkLaneOrder(inOrder, f);
    await checkThread(
      store,
      // 20: the default context_window of the agent setupTenant creates.
      { tenant: TENANT, agent: 'a', scope: s.scope, contextWindow: 20 },
      inOrder.filter((checked) => checked.run.status === 'succeeded').map((c) => c.run.run_id),
      f,
    );
  } finally {
    await store.close();
  }
  return f;
}

/** Several tool rounds: effectful, read-only, idempotent, read-only — then the answer. */
export const SWEEP_SCRIPT = [
  '@call sink_write {"value":"first"}',
  '@call calc_eval {"expression":"6*7"}',
  '@call sink_put {"value":"second"}',
  '@call clock_now {}',
  'sweep',
].join('\n');

export interface FaultCase {
  point: string;
  hit: number;
}

/**
 * One crash scenario: serve with `point=hit*kill`, submit the scripted turn (with a
 * delivery destination), wait for the kill, restart without the fault point, resubmit
 * (same request id) when the kill came before the answer, wait for the run, submit a
 * follow-up turn in the same scope, stop, and check the invariants.
 */
export async function crashScenario(
  fault: FaultCase,
  sink: EffectSink,
  extraEnv: Record<string, string> = {},
  backend: CrashBackend = sqliteCrashBackend,
): Promise<Findings> {
  const dataDir = tempDir();
  const scope = `sweep-${fault.point}-${fault.hit}`;
  const requestId = `req-${fault.point}-${fault.hit}`;
  const base = { KEEL_TEST_EFFECT_SINK_URL: sink.url, ...backend.env(dataDir), ...extraEnv };
  const doomed = await serve(dataDir, {
    ...base,
    KEEL_TEST_FAILPOINTS: '1',
    KEEL_FAILPOINTS: `${fault.point}=${fault.hit}*kill`,
  });
  await setupTenant(doomed.url);
  const body = {
    agent: 'a',
    scope,
    payload: { text: SWEEP_SCRIPT },
    request_id: requestId,
    delivery: { destination: 'test:sweep' },
  };
  let runId: string | null = null;
  try {
    const submitted = await call(doomed.url, 'POST', `/v1/tenants/${TENANT}/turns`, body);
    runId = submitted.body.run_id as string;
  } catch {
    // Killed between the commit and the answer (submit.after_commit): resubmitted below.
  }
  const killed = await Promise.race([
    doomed.exited,
    new Promise<null>((resolve) => setTimeout(() => resolve(null), 20_000)),
  ]);
  if (killed?.signal !== 'SIGKILL') {
    await doomed.kill();
    throw new Error(`${fault.point}=${fault.hit}*kill never fired`);
  }
  const restarted = await serve(dataDir, base);
  try {
    const again = await call(restarted.url, 'POST', `/v1/tenants/${TENANT}/turns`, body);
    if (runId !== null && again.body.run_id !== runId) {
      throw new Error(`I2: resubmit gave ${again.body.run_id}, not ${runId}`);
    }
    runId = again.body.run_id as string;
    await waitTerminal(restarted.url, runId);
    const followUp = await call(restarted.url, 'POST', `/v1/tenants/${TENANT}/turns`, {
      agent: 'a',
      scope,
      payload: { text: 'after the crash' },
    });
    await waitTerminal(restarted.url, followUp.body.run_id as string);
    // Everything checked is committed (synchronous=FULL): a kill is as good as a stop.
    await restarted.kill();
    return await checkScenario(
      { dataDir, runId, requestId, followUpId: followUp.body.run_id as string, scope },
      sink,
      backend,
    );
  } finally {
    await restarted.kill();
  }
}

/** Runs `tasks` with at most `limit` at a time, in order of start. */
export async function pool<T>(limit: number, tasks: (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  async function lane(): Promise<void> {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await (tasks[index] as () => Promise<T>)();
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, lane));
  return results;
}
