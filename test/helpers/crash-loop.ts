// The random crash loop (docs/reliability.md, Invariants): M turns over S scopes of a
// real `keel serve`, submitted in waves while it lives, and K SIGKILLs at random moments —
// no fault points — each followed by a restart on the same data dir that resubmits, with
// the same request_id, every turn whose submit got no answer. A last life without kills
// lets every run finish, replays every turn (the same request_id must answer the same
// run), and every run and scope is checked (crash-checks.ts).
//
// Every random choice (scripts, waves, submit and kill times) comes from one seed; process
// timing does not, so a seed reproduces the plan, not the exact interleaving.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { UncertainEffectPolicy } from '../../src/types.ts';
import type { CheckedRun, Findings, SinkEffect } from './crash-checks.ts';
import {
  checkLaneOrder,
  checkRequestIds,
  checkRun,
  checkScopeEffects,
  checkThread,
  emptyFindings,
  runsOfScope,
} from './crash-checks.ts';
import type { CrashBackend } from './crash-backend.ts';
import { sqliteCrashBackend } from './crash-backend.ts';
import type { EffectSink } from './crash-harness.ts';
import { TENANT, call, serve, tempDir } from './crash-harness.ts';

/** Small enough that most scopes outgrow it, so the thread's trimming is checked too. */
const CONTEXT_WINDOW = 3;
const KILL_DELAY_MS = { min: 100, max: 700 };
/** Wave turns are submitted up to this long after their life started. */
const SUBMIT_SPREAD_MS = 300;
const WAIT_MS = 30_000;

const AGENTS: Record<string, { policy: UncertainEffectPolicy }> = {
  a: { policy: 'tell_model' },
  f: { policy: 'fail' },
};

export interface RandomLoopOptions {
  seed: number;
  kills: number;
  turns: number;
  scopes: number;
  sink: EffectSink;
  /** Extra environment for every `keel serve` (a seeded bug). */
  env?: Record<string, string>;
  /** Where the data lives (default SQLite). */
  backend?: CrashBackend;
}

export interface RandomLoopReport {
  findings: Findings;
  turns: number;
  scopes: number;
  kills: number;
  /** Killed processes that held a run another process later resumed. */
  inFlightKills: number;
  /**
   * Live processes whose run was taken over after its lease lapsed (only counted where
   * the backend runs short leases; elsewhere each is a problem).
   */
  leaseLapses: number;
  /** Claims that took over a run from a killed process. */
  resumes: number;
  /** Resumed attempts killed in turn (a second kill while resuming). */
  killedResumes: number;
  /** Submits left without an answer by a kill, then resubmitted. */
  resubmits: number;
  /** Of those, the ones the store had committed: the resubmit answered `deduplicated`. */
  ambiguous: number;
  /** Runs of a `fail` agent that ended EFFECT_OUTCOME_UNKNOWN (as they must). */
  failedUncertain: number;
  seconds: number;
}

interface Turn {
  requestId: string;
  scope: string;
  agent: string;
  body: Record<string, unknown>;
  destination: boolean;
  wave: number;
  /** Submitted this long after its life started; 0 once carried over to a later life. */
  offsetMs: number;
  runId: string | null;
  unanswered: number;
}

/** mulberry32: tiny, seedable, good enough to pick scripts and times. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function between(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

/** 1–3 tool rounds (sometimes all in one @parallel step), then a plain answer. */
function script(random: () => number, label: string): string {
  const rounds = between(random, 1, 3);
  const lines = rounds > 1 && random() < 0.2 ? ['@parallel'] : [];
  for (let round = 0; round < rounds; round++) {
    const pick = random();
    const value = `${label}.${round}`;
    // Holds make the sink calls last long enough for kills to land inside them.
    if (pick < 0.4) {
      lines.push(
        `@call sink_write ${JSON.stringify({ value, hold_ms: between(random, 40, 160) })}`,
      );
    } else if (pick < 0.65) {
      lines.push(`@call sink_put ${JSON.stringify({ value, hold_ms: between(random, 0, 80) })}`);
    } else if (pick < 0.85) {
      const expression = `${between(random, 2, 99)}*${between(random, 2, 99)}`;
      lines.push(`@call calc_eval ${JSON.stringify({ expression })}`);
    } else lines.push('@call clock_now {}');
  }
  lines.push(label);
  return lines.join('\n');
}

function plan(options: RandomLoopOptions): { turns: Turn[]; killDelays: number[] } {
  const random = seededRandom(options.seed);
  const scopes = Array.from({ length: options.scopes }, (_, index) => ({
    scope: `rnd-${options.seed}-${index}`,
    agent: index % 4 === 3 ? 'f' : 'a',
  }));
  const waves = Math.max(1, options.kills);
  const turns = Array.from({ length: options.turns }, (_, index): Turn => {
    const { scope, agent } = scopes[between(random, 0, scopes.length - 1)] as (typeof scopes)[0];
    const requestId = `rnd-${options.seed}-${index}`;
    const destination = random() < 0.5;
    return {
      requestId,
      scope,
      agent,
      destination,
      body: {
        agent,
        scope,
        payload: { text: script(random, `turn ${index}`) },
        request_id: requestId,
        ...(destination && { delivery: { destination: 'test:random' } }),
      },
      wave: Math.floor((index * waves) / options.turns),
      offsetMs: between(random, 0, SUBMIT_SPREAD_MS),
      runId: null,
      unanswered: 0,
    };
  });
  const killDelays = Array.from({ length: options.kills }, () =>
    between(random, KILL_DELAY_MS.min, KILL_DELAY_MS.max),
  );
  return { turns, killDelays };
}

async function setupAgents(url: string): Promise<void> {
  await call(url, 'POST', '/v1/tenants', { name: TENANT });
  for (const [name, { policy }] of Object.entries(AGENTS)) {
    const put = await call(url, 'PUT', `/v1/tenants/${TENANT}/agents/${name}`, {
      model: 'fixture/echo',
      context_window: CONTEXT_WINDOW,
      on_uncertain_effect: policy,
    });
    if (put.status >= 300) throw new Error(`agent ${name}: ${JSON.stringify(put.body)}`);
  }
}

/** One `keel serve` process between its start and its kill. */
interface Life {
  url: string;
  startedAt: number;
  /** Resolves at the kill, so pending submits give up instead of sleeping on. */
  ended: Promise<void>;
  over: boolean;
}

function sleep(ms: number, ended?: Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void ended?.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * Submits each scope's queue in order, one turn at a time, so a scope's runs are queued
 * in plan order even across kills: a turn without an answer stops its scope's queue until
 * the next life resubmits it.
 */
async function submitQueues(
  queues: Map<string, Turn[]>,
  life: Life,
  report: RandomLoopReport,
): Promise<void> {
  await Promise.all(
    [...queues.values()].map(async (queue) => {
      for (let turn = queue[0]; turn; turn = queue[0]) {
        const wait = life.startedAt + turn.offsetMs - Date.now();
        if (wait > 0) await sleep(wait, life.ended);
        if (life.over) return;
        let answer: { status: number; body: { run_id?: string; deduplicated?: boolean } };
        try {
          answer = await call(life.url, 'POST', `/v1/tenants/${TENANT}/turns`, turn.body);
        } catch {
          turn.unanswered += 1;
          return;
        }
        if ((answer.status !== 200 && answer.status !== 202) || !answer.body.run_id) {
          report.findings.problems.push(`submit ${turn.requestId}: ${answer.status}`);
          return;
        }
        if (turn.unanswered > 0) {
          report.resubmits += 1;
          if (answer.body.deduplicated) report.ambiguous += 1;
        }
        turn.runId = answer.body.run_id;
        queue.shift();
      }
    }),
  );
}

function startLife(url: string): { life: Life; end: () => void } {
  let resolveEnded = (): void => {};
  const ended = new Promise<void>((resolve) => (resolveEnded = resolve));
  const life: Life = { url, startedAt: Date.now(), ended, over: false };
  const end = (): void => {
    life.over = true;
    resolveEnded();
  };
  return { life, end };
}

/** Runs the loop on a fresh data dir, then checks every run and scope. */
export async function randomCrashLoop(options: RandomLoopOptions): Promise<RandomLoopReport> {
  const started = Date.now();
  const dataDir = tempDir();
  const backend = options.backend ?? sqliteCrashBackend;
  // This loop proves recovery from kills, not the crash budget: a run in flight at every
  // kill must still end as its resume policy says, so max_attempts exceeds the kills
  // (RUN_CRASHED has its own tests: runtime-crashes, crash-attempts).
  const config = join(dataDir, 'crash-loop.toml');
  writeFileSync(config, `[workers]\n${backend.workerToml}max_attempts = ${options.kills + 1}\n`);
  const env = {
    KEEL_TEST_EFFECT_SINK_URL: options.sink.url,
    ...backend.env(dataDir),
    KEEL_CONFIG: config,
    ...options.env,
  };
  const { turns, killDelays } = plan(options);
  const report: RandomLoopReport = {
    findings: emptyFindings(),
    turns: turns.length,
    scopes: new Set(turns.map((turn) => turn.scope)).size,
    kills: 0,
    inFlightKills: 0,
    leaseLapses: 0,
    resumes: 0,
    killedResumes: 0,
    resubmits: 0,
    ambiguous: 0,
    failedUncertain: 0,
    seconds: 0,
  };
  const queues = new Map<string, Turn[]>();
  const killedPids = new Set<number>();

  for (let lifeIndex = 0; lifeIndex <= options.kills; lifeIndex++) {
    const served = await serve(dataDir, env);
    try {
      if (lifeIndex === 0) await setupAgents(served.url);
      // Turns carried over from a killed life go first, at once.
      for (const queue of queues.values()) for (const turn of queue) turn.offsetMs = 0;
      for (const turn of turns.filter((t) => t.wave === lifeIndex)) {
        queues.set(turn.scope, [...(queues.get(turn.scope) ?? []), turn]);
      }
      const { life, end } = startLife(served.url);
      const submitting = submitQueues(queues, life, report);
      const killDelay = killDelays[lifeIndex];
      if (killDelay === undefined) {
        await submitting;
        await finish(served.url, turns, report.findings);
        await served.terminate();
        break;
      }
      await sleep(killDelay);
      end();
      await served.kill();
      const exit = await served.exited;
      if (exit.signal !== 'SIGKILL') {
        report.findings.problems.push(`life ${lifeIndex}: keel serve exited ${exit.code} early`);
      }
      killedPids.add(served.pid);
      report.kills += 1;
      await submitting;
    } finally {
      await served.kill();
    }
  }
  await checkAll(dataDir, backend, turns, options.sink, killedPids, report);
  report.seconds = (Date.now() - started) / 1000;
  return report;
}

/** The last life: every run terminal, then every turn replayed (I2). */
async function finish(url: string, turns: Turn[], f: Findings): Promise<void> {
  for (const turn of turns) {
    if (turn.runId === null) continue;
    const path = `/v1/tenants/${TENANT}/runs/${turn.runId}/wait?timeout_ms=${WAIT_MS}`;
    const waited = await call(url, 'GET', path);
    if (waited.body.timed_out !== false) f.problems.push(`${turn.runId}: not terminal`);
  }
  for (const turn of turns) {
    if (turn.runId === null) continue;
    const replay = await call(url, 'POST', `/v1/tenants/${TENANT}/turns`, turn.body);
    if (replay.status !== 200 || replay.body.run_id !== turn.runId) {
      f.run_count_errors += 1;
      f.problems.push(
        `I2: replay of ${turn.requestId} answered ${replay.status} ${replay.body.run_id}`,
      );
    }
  }
}

async function checkAll(
  dataDir: string,
  backend: CrashBackend,
  turns: Turn[],
  sink: EffectSink,
  killedPids: Set<number>,
  report: RandomLoopReport,
): Promise<void> {
  const f = report.findings;
  const effectsOfScope = new Map<string, SinkEffect[]>();
  for (const effect of await sink.effects()) {
    effectsOfScope.set(effect.scope, [...(effectsOfScope.get(effect.scope) ?? []), effect]);
  }
  const interruptedPids = new Set<number>();
  const store = await backend.open(dataDir);
  try {
    for (const scope of new Set(turns.map((turn) => turn.scope))) {
      const ofScope = turns.filter((turn) => turn.scope === scope);
      const agent = ofScope[0]?.agent ?? 'a';
      const answered = ofScope.filter((turn): turn is Turn & { runId: string } => !!turn.runId);
      if (answered.length !== ofScope.length) {
        f.lost += ofScope.length - answered.length;
        f.problems.push(`I1: ${ofScope.length - answered.length} turns of ${scope} never answered`);
      }
      const runs = await runsOfScope(store, TENANT, scope);
      checkRequestIds(runs, answered, f);
      if (runs.length !== ofScope.length) {
        f.run_count_errors += 1;
        f.problems.push(`I1: ${runs.length} runs in ${scope} for ${ofScope.length} turns`);
      }
      const effects = effectsOfScope.get(`${TENANT}/${agent}/${scope}`) ?? [];
      const known = new Set(answered.map((turn) => turn.runId));
      for (const effect of effects.filter((e) => !known.has(e.run_id))) {
        f.problems.push(`sink: ${effect.idempotency_key} of no submitted turn`);
      }
      const checked: CheckedRun[] = [];
      for (const turn of answered) {
        const run = await checkRun(
          store,
          TENANT,
          {
            runId: turn.runId,
            destination: turn.destination,
            onUncertain: AGENTS[agent]?.policy ?? 'tell_model',
            effects: effects.filter((effect) => effect.run_id === turn.runId),
          },
          f,
        );
        if (run) checked.push(run);
      }
      checkScopeEffects(effects, f);
      checkLaneOrder(checked, f);
      const succeeded = checked.filter((c) => c.run.status === 'succeeded');
      await checkThread(
        store,
        { tenant: TENANT, agent, scope, contextWindow: CONTEXT_WINDOW },
        succeeded.map((c) => c.run.run_id),
        f,
      );
      report.failedUncertain += checked.length - succeeded.length;
      for (const run of checked) {
        report.resumes += run.interruptedPids.length;
        report.killedResumes += Math.max(0, run.interruptedPids.length - 1);
        for (const pid of run.interruptedPids) interruptedPids.add(pid);
      }
    }
  } finally {
    await store.close();
  }
  for (const pid of interruptedPids) {
    if (killedPids.has(pid)) report.inFlightKills += 1;
    else if (backend.shortLease) report.leaseLapses += 1;
    else f.problems.push(`a run was taken from pid ${pid}, never killed`);
  }
  // I10 as well: the store survived every kill intact.
  const integrity = await backend.integrity(dataDir);
  if (integrity) f.problems.push(integrity);
}

/** The figures line the crash tests print. */
export function describeReport(label: string, seed: number, report: RandomLoopReport): string {
  const f = report.findings;
  return (
    `${label} seed=${seed} turns=${report.turns} scopes=${report.scopes} ` +
    `kills=${report.kills} in_flight_kills=${report.inFlightKills} lease_lapses=${report.leaseLapses} ` +
    `resumes=${report.resumes} killed_resumes=${report.killedResumes} resubmits=${report.resubmits} ambiguous=${report.ambiguous} ` +
    `lost=${f.lost} recorded_reexec=${f.recorded_reexec} dup_effects=${f.dup_effects} ` +
    `uncertain=${f.uncertain} failed_uncertain=${report.failedUncertain} ` +
    `rerun_same_key=${f.rerun_same_key} overlaps=${f.overlaps} partial=${f.partial} ` +
    `problems=${f.problems.length} (${report.seconds.toFixed(1)} s)`
  );
}
