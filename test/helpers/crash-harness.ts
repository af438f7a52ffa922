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
import { KEEL_TEST_SERVE } from './keel-test-serve-entry.ts';
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
import { settledWithin } from './wait-for.ts';
import { TS_IMPORT } from './ts-import.ts';

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

function spawnTracked(
  args: string[],
  env: Record<string, string>,
  stdin: 'ignore' | 'pipe' = 'ignore',
): ChildProcess {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: childEnv(env),
    stdio: [stdin, 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  // A write to the stdin of a child that was just killed fails (EPIPE); arm() notices
  // the exit.
  child.stdin?.on('error', () => undefined);
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
  const child = spawnTracked([...TS_IMPORT, 'test/helpers/effect-sink.ts', log], {});
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
  /**
   * Only for `serve(…, { armable: true })`: from now on the fault points are `spec`
   * (KEEL_FAILPOINTS syntax; hits are counted from here). Resolves once keel applied it.
   */
  arm(spec: string): Promise<void>;
  kill(): Promise<void>;
  terminate(): Promise<void>;
}

/**
 * `keel serve` on the data dir. `armable`: fault points enabled but none set until
 * `arm` names them (keel-test-serve.ts reads them from stdin), so one process can serve
 * a recovery without fault points and then be the doomed process of the next scenario.
 */
export async function serve(
  dataDir: string,
  env: Record<string, string>,
  options: { armable?: boolean } = {},
): Promise<Served> {
  // Port 0: keel binds a free port itself and names it in its ready line. A port picked
  // here and bound later by the child could be taken in between (EADDRINUSE under load).
  const child = spawnTracked(
    [...KEEL_TEST_SERVE, '--listen', '127.0.0.1:0', '--data-dir', dataDir],
    options.armable ? { ...env, KEEL_TEST_FAILPOINTS: '1', KEEL_TEST_FAILPOINTS_STDIN: '1' } : env,
    options.armable ? 'pipe' : 'ignore',
  );
  const exited = exitOf(child);
  const url = await readyLine(child, /^keel listening on (http:\/\/\S+) /m, 'keel serve');
  return {
    url,
    pid: child.pid ?? 0,
    exited,
    async arm(spec) {
      if (!child.stdin) throw new Error('keel serve was not started armable');
      const line = `failpoints armed: ${spec}\n`;
      await new Promise<void>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => done(new Error(`keel did not arm ${spec}`)), 20_000);
        const onData = (chunk: Buffer): void => {
          out += chunk.toString();
          if (out.includes(line)) done(null);
        };
        const onExit = (): void => done(new Error(`keel exited before arming ${spec}`));
        function done(error: Error | null): void {
          clearTimeout(timer);
          child.stdout?.off('data', onData);
          child.off('exit', onExit);
          if (error) reject(error);
          else resolve();
        }
        child.stdout?.on('data', onData);
        child.once('exit', onExit);
        child.stdin?.write(`arm ${spec}\n`);
      });
    },
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
 * The scripted turn (with a delivery destination) submitted to `doomed`, which is set to
 * die at `fault`; waits for the kill, restarts keel on the data dir without the fault
 * point (`restart`), resubmits (same request id) when the kill came before the answer,
 * waits for the run, and submits a follow-up turn in the same scope and waits for it.
 * Returns the restarted keel (alive) and what checkScenario checks once it is stopped.
 */
async function crashAndRecover(
  doomed: Served,
  dataDir: string,
  fault: FaultCase,
  restart: () => Promise<Served>,
): Promise<{ restarted: Served; scenario: Scenario }> {
  const scope = `sweep-${fault.point}-${fault.hit}`;
  const requestId = `req-${fault.point}-${fault.hit}`;
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
  const killed = await settledWithin(doomed.exited, 20_000);
  if (killed?.signal !== 'SIGKILL') {
    await doomed.kill();
    throw new Error(`${fault.point}=${fault.hit}*kill never fired`);
  }
  const restarted = await restart();
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
    const followUpId = followUp.body.run_id as string;
    return { restarted, scenario: { dataDir, runId, requestId, followUpId, scope } };
  } catch (error) {
    await restarted.kill();
    throw error;
  }
}

/**
 * One crash scenario: serve with `point=hit*kill`, then crashAndRecover, stop, and check
 * the invariants.
 */
export async function crashScenario(
  fault: FaultCase,
  sink: EffectSink,
  extraEnv: Record<string, string> = {},
  backend: CrashBackend = sqliteCrashBackend,
): Promise<Findings> {
  const dataDir = tempDir();
  const base = { KEEL_TEST_EFFECT_SINK_URL: sink.url, ...backend.env(dataDir), ...extraEnv };
  const doomed = await serve(dataDir, {
    ...base,
    KEEL_TEST_FAILPOINTS: '1',
    KEEL_FAILPOINTS: `${fault.point}=${fault.hit}*kill`,
  });
  await setupTenant(doomed.url);
  const { restarted, scenario } = await crashAndRecover(doomed, dataDir, fault, () =>
    serve(dataDir, base),
  );
  // Everything checked is committed (synchronous=FULL): a kill is as good as a stop.
  await restarted.kill();
  return checkScenario(scenario, sink, backend);
}

/**
 * The crash scenarios of `faults` one after the other on one data dir (a scope each):
 * the keel restarted after one scenario's kill recovers it without fault points, then is
 * armed with the next fault and is that scenario's doomed process — every scenario still
 * has its own kill and restart, at one `keel serve` start-up per scenario instead of two.
 * The stopped data dir is checked per scenario, as crashScenario does.
 */
export async function crashScenarioChain(
  faults: FaultCase[],
  sink: EffectSink,
  backend: CrashBackend = sqliteCrashBackend,
): Promise<{ fault: FaultCase; found: Findings }[]> {
  const dataDir = tempDir();
  const base = { KEEL_TEST_EFFECT_SINK_URL: sink.url, ...backend.env(dataDir) };
  const restart = (): Promise<Served> => serve(dataDir, base, { armable: true });
  let served = await restart();
  const scenarios: { fault: FaultCase; scenario: Scenario }[] = [];
  try {
    await setupTenant(served.url);
    for (const fault of faults) {
      await served.arm(`${fault.point}=${fault.hit}*kill`);
      const recovered = await crashAndRecover(served, dataDir, fault, restart);
      served = recovered.restarted;
      scenarios.push({ fault, scenario: recovered.scenario });
    }
  } finally {
    // Everything checked is committed (synchronous=FULL): a kill is as good as a stop.
    await served.kill();
  }
  const results: { fault: FaultCase; found: Findings }[] = [];
  for (const { fault, scenario } of scenarios) {
    results.push({ fault, found: await checkScenario(scenario, sink, backend) });
  }
  return results;
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
