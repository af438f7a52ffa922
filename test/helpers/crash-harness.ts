// Crash-test plumbing shared by the crash sweep and the seeded-bug tests: `keel serve` as
// a child process (killed at a fault point, restarted on the same data dir), the effect
// sink process, and the invariant checker that reads the stopped data dir and the sink
// log (spec/reliability.md I1, I3–I6, I9, I11).

import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import type { TraceEvent } from '../../src/types.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
export const TENANT = 'crash';
const children = new Set<ChildProcess>();
const dirs: string[] = [];

export function tempDir(prefix = 'keel-crash-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** Kills every child still alive and removes the temp dirs. */
export function cleanup(): void {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
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
    const timer = setTimeout(() => reject(new Error(`${what}: no ready line; ${err}`)), 20_000);
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

export interface SinkEffect {
  seq: number;
  t_start: number;
  t_end: number;
  tool: string;
  idempotency_key: string;
  run_id: string;
  call_id: string;
  scope: string;
  pid: number;
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
  exited: Promise<Exit>;
  kill(): Promise<void>;
  terminate(): Promise<void>;
}

export async function serve(dataDir: string, env: Record<string, string>): Promise<Served> {
  const port = await freePort();
  const child = spawnTracked(
    ['src/cli/main.ts', 'serve', '--listen', `127.0.0.1:${port}`, '--data-dir', dataDir],
    env,
  );
  const exited = exitOf(child);
  const url = await readyLine(child, /^keel listening on (http:\/\/\S+) /m, 'keel serve');
  return {
    url,
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
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
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

/** The figures of one crashed-and-resumed scenario; every one must be 0 except noted. */
export interface Findings {
  lost: number;
  /** Sink executions of a call after its result was recorded (I4). */
  recorded_reexec: number;
  /** Executions of an effectful call beyond its first. */
  dup_effects: number;
  /** Re-executions of unrecorded calls (allowed; all with the same key). */
  rerun_same_key: number;
  /** Re-executions with a key other than <run_id>:<call_id> (I4). */
  key_mismatch: number;
  /** OUTCOME_UNKNOWN results the model got (allowed). */
  uncertain: number;
  /** I6 / I9 violations. */
  partial: number;
  /** I5: recorded responses requested again / steps going back. */
  step_regressions: number;
  /** I3: overlapping executions within one scope. */
  overlaps: number;
  /** I1: runs per request id other than one, or a run not succeeded. */
  run_count_errors: number;
  /** I11: entries written by an attempt older than an earlier entry's. */
  fence_violations: number;
  problems: string[];
}

function emptyFindings(): Findings {
  return {
    lost: 0,
    recorded_reexec: 0,
    dup_effects: 0,
    rerun_same_key: 0,
    key_mismatch: 0,
    uncertain: 0,
    partial: 0,
    step_regressions: 0,
    overlaps: 0,
    run_count_errors: 0,
    fence_violations: 0,
    problems: [],
  };
}

/** Attempt of each trace event: the attempt of the latest `run.claimed` before it. */
function attemptsOf(trace: TraceEvent[]): {
  eventAttempt: number[];
  pidAttempt: Map<number, number>;
} {
  let attempt = 0;
  const eventAttempt: number[] = [];
  const pidAttempt = new Map<number, number>();
  for (const event of trace) {
    if (event.type === 'run.claimed') {
      attempt = Number(event.data.attempt);
      const parts = String(event.data.worker).split(':');
      pidAttempt.set(Number(parts[parts.length - 2]), attempt);
    }
    eventAttempt.push(attempt);
  }
  return { eventAttempt, pidAttempt };
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
export async function checkScenario(s: Scenario, sink: EffectSink): Promise<Findings> {
  const f = emptyFindings();
  const problem = (text: string): void => {
    f.problems.push(text);
  };
  const store = await openSqliteStore({ path: join(s.dataDir, 'keel.db'), durability: 'full' });
  try {
    // I1: exactly one run per request id, and it ended succeeded.
    const runs = (await store.listRuns(TENANT, { scope: s.scope }, 200)).items;
    const mine = runs.filter((run) => run.request_id === s.requestId);
    if (mine.length !== 1) {
      f.run_count_errors += 1;
      problem(`I1: ${mine.length} runs for ${s.requestId}`);
    }
    const run = await store.getRun(TENANT, s.runId);
    if (run?.status !== 'succeeded' || !run.output) {
      f.lost += 1;
      problem(`I1: run ${s.runId} is ${run?.status}`);
      return f;
    }
    const entries = await store.loadEntries(s.runId);
    const trace = (await store.getTrace(TENANT, s.runId, 0, 10_000)) ?? [];
    const { eventAttempt, pidAttempt } = attemptsOf(trace);

    // I5: one assistant entry per step; recorded model responses never requested again.
    const assistants = entries.filter((entry) => entry.kind === 'assistant').length;
    if (assistants !== run.steps)
      problem(`I5: ${assistants} assistant entries, ${run.steps} steps`);
    let lastStep = 0;
    for (const event of trace.filter((e) => e.type === 'model.response')) {
      const step = Number(event.data.step);
      if (step <= lastStep) {
        f.step_regressions += 1;
        problem(`I5: model.response step ${step} after step ${lastStep}`);
      }
      lastStep = step;
    }
    if (assistants !== run.steps) f.step_regressions += 1;

    // I11: entries' attempts never go back (a stale attempt's write would).
    let lastAttempt = 0;
    for (const entry of entries) {
      if (entry.attempt < lastAttempt || entry.attempt > run.attempt) {
        f.fence_violations += 1;
        problem(`I11: entry ${entry.seq} by attempt ${entry.attempt} after ${lastAttempt}`);
      }
      lastAttempt = Math.max(lastAttempt, entry.attempt);
    }

    // I4: a recorded call is never executed again; re-executions reuse the key.
    const recordedAt = new Map<string, number>();
    trace.forEach((event, index) => {
      const callId = String(event.data.call_id);
      if (event.type === 'tool.result' && !recordedAt.has(callId)) {
        recordedAt.set(callId, eventAttempt[index] ?? 0);
      }
    });
    const effects = await sink.effects(s.runId);
    const perKey = new Map<string, SinkEffect[]>();
    for (const effect of effects) {
      perKey.set(effect.idempotency_key, [...(perKey.get(effect.idempotency_key) ?? []), effect]);
      if (effect.idempotency_key !== `${s.runId}:${effect.call_id}`) f.key_mismatch += 1;
      const attempt = pidAttempt.get(effect.pid);
      const recorded = recordedAt.get(effect.call_id);
      if (attempt === undefined) problem(`sink: pid ${effect.pid} claimed no attempt`);
      else if (recorded !== undefined && attempt > recorded) {
        f.recorded_reexec += 1;
        problem(`I4: ${effect.call_id} ran in attempt ${attempt}, recorded in ${recorded}`);
      }
    }
    for (const list of perKey.values()) {
      f.rerun_same_key += list.length - 1;
      if (list[0]?.tool === 'sink_write') f.dup_effects += list.length - 1;
    }
    if (f.dup_effects > 0) problem(`effectful call executed ${f.dup_effects} extra time(s)`);
    f.uncertain = entries.filter(
      (entry) => entry.kind === 'tool_result' && entry.body.error?.code === 'OUTCOME_UNKNOWN',
    ).length;

    // I3: per scope, execution intervals never overlap.
    const sorted = [...effects].sort((a, b) => a.t_start - b.t_start);
    for (let i = 1; i < sorted.length; i++) {
      const prev = sorted[i - 1];
      const next = sorted[i];
      if (prev && next && prev.scope === next.scope && next.t_start < prev.t_end) {
        f.overlaps += 1;
        problem(`I3: ${next.call_id} started before ${prev.call_id} ended`);
      }
    }

    // I6: succeeded ⇔ output ⇔ one terminal event ⇔ turn in the thread once ⇔ delivery.
    const terminal = trace.filter((e) =>
      ['run.succeeded', 'run.failed', 'run.cancelled'].includes(e.type),
    );
    if (terminal.length !== 1 || terminal[0]?.type !== 'run.succeeded') {
      f.partial += 1;
      problem(`I6: terminal events ${terminal.map((e) => e.type).join(',')}`);
    }
    const deliveries = (await store.listDeliveries(TENANT, { run_id: s.runId }, 10)).items;
    if (deliveries.length !== 1) {
      f.partial += 1;
      problem(`I6: ${deliveries.length} deliveries for a run with a destination`);
    }
    const followUp = (await store.listDeliveries(TENANT, { run_id: s.followUpId }, 10)).items;
    if (followUp.length !== 0) {
      f.partial += 1;
      problem('I6: a delivery for a run without a destination');
    }
    // I9: the thread is the succeeded turns in order, each once (user + assistant).
    const thread = await store.getThread(TENANT, 'a', s.scope);
    const order = (thread?.messages ?? []).map((message) => message.run_id);
    const expected = [s.runId, s.runId, s.followUpId, s.followUpId];
    if (JSON.stringify(order) !== JSON.stringify(expected)) {
      f.partial += 1;
      problem(`I9: thread order ${order.join(',')}`);
    }
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
): Promise<Findings> {
  const dataDir = tempDir();
  const scope = `sweep-${fault.point}-${fault.hit}`;
  const requestId = `req-${fault.point}-${fault.hit}`;
  const base = { KEEL_TEST_EFFECT_SINK_URL: sink.url, ...extraEnv };
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
