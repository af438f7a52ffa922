// The invariant checks of the crash tests (docs/reliability.md I1–I6, I9, I11), read from
// a stopped data dir and the effect sink's log. They come in two sizes so that the sweep
// (one scripted run and its follow-up, crash-harness.ts) and the random crash loop (many
// runs over many scopes, crash-loop.ts) check the same things:
//   per run   — checkRun: outcome, journal, trace, sink executions, delivery;
//   per scope — checkScopeEffects (I3 across all runs of the scope), checkLaneOrder and
//               checkThread (I9), checkRequestIds (I1/I2).

import type { Store } from '../../src/store/store.ts';
import type { Run, TraceEvent, UncertainEffectPolicy } from '../../src/types.ts';

/** One line of the effect sink's log: one execution of a sink tool. */
export interface SinkEffect {
  seq: number;
  t_start: number;
  t_end: number;
  tool: string;
  idempotency_key: string;
  run_id: string;
  call_id: string;
  /** `<tenant>/<agent>/<scope>` */
  scope: string;
  pid: number;
}

/** The figures of a crash test; every one must be 0 except those marked allowed. */
export interface Findings {
  /** I1: a turn without a terminal run, or a run that ended other than it must. */
  lost: number;
  /** Sink executions of a call after its result was recorded (I4). */
  recorded_reexec: number;
  /** Executions of an effectful call beyond its first. */
  dup_effects: number;
  /** Re-executions of unrecorded calls (allowed; all with the same key). */
  rerun_same_key: number;
  /** Re-executions with a key other than <run_id>:<call_id> (I4). */
  key_mismatch: number;
  /** Effectful calls found in flight at a resume: outcome unknown (allowed). */
  uncertain: number;
  /** A recorded successful sink call the sink never saw. */
  missing_effects: number;
  /** The resume policy not applied: OUTCOME_UNKNOWN results ≠ uncertain calls, or the
   * wrong outcome for on_uncertain_effect = fail. */
  resume_violations: number;
  /** I6 / I9 violations. */
  partial: number;
  /** I5: recorded responses requested again / steps going back. */
  step_regressions: number;
  /** I3: overlapping executions within one scope. */
  overlaps: number;
  /** I9: a run of a scope claimed before the run submitted before it had ended. */
  fifo_violations: number;
  /** I1/I2: runs per request id other than one, or not the run the submit answered. */
  run_count_errors: number;
  /** I11: entries written by an attempt older than an earlier entry's. */
  fence_violations: number;
  problems: string[];
}

export type Figure = keyof Omit<Findings, 'problems'>;

export function emptyFindings(): Findings {
  return {
    lost: 0,
    recorded_reexec: 0,
    dup_effects: 0,
    rerun_same_key: 0,
    key_mismatch: 0,
    uncertain: 0,
    missing_effects: 0,
    resume_violations: 0,
    partial: 0,
    step_regressions: 0,
    overlaps: 0,
    fifo_violations: 0,
    run_count_errors: 0,
    fence_violations: 0,
    problems: [],
  };
}

const TERMINAL_EVENTS = ['run.succeeded', 'run.failed', 'run.cancelled'];

/**
 * Attempt of each trace event (the latest `run.claimed` before it), the claims of each
 * pid (one process may claim a run again after its own lease lapsed under load) and the
 * claiming pids in order.
 */
function attemptsOf(trace: TraceEvent[]): {
  eventAttempt: number[];
  pidClaims: Map<number, { attempt: number; at: number }[]>;
  claimPids: number[];
} {
  let attempt = 0;
  const eventAttempt: number[] = [];
  const pidClaims = new Map<number, { attempt: number; at: number }[]>();
  const claimPids: number[] = [];
  for (const event of trace) {
    if (event.type === 'run.claimed') {
      attempt = Number(event.data.attempt);
      // The worker name is `<hostname>:<pid>:<random>` (runtime/worker.ts).
      const parts = String(event.data.worker).split(':');
      const pid = Number(parts[parts.length - 2]);
      pidClaims.set(pid, [...(pidClaims.get(pid) ?? []), { attempt, at: Date.parse(event.ts) }]);
      claimPids.push(pid);
    }
    eventAttempt.push(attempt);
  }
  return { eventAttempt, pidClaims, claimPids };
}

/**
 * The attempt an effect ran in: its process's latest claim made before the effect
 * started (the sink and the store read the same host clock; 1 ms for rounding).
 */
function attemptOfEffect(
  claims: { attempt: number; at: number }[] | undefined,
  tStart: number,
): number | undefined {
  if (!claims || claims.length === 0) return undefined;
  let found = claims[0]?.attempt;
  for (const claim of claims) if (claim.at <= tStart + 1) found = claim.attempt;
  return found;
}

export interface RunCheck {
  runId: string;
  /** The turn asked for a delivery. */
  destination: boolean;
  /** The agent's policy: with `fail`, a run left with an uncertain call must fail. */
  onUncertain: UncertainEffectPolicy;
  /** This run's executions in the sink log. */
  effects: SinkEffect[];
}

export interface CheckedRun {
  run: Run;
  /** First claim and terminal event, epoch ms (for the lane order of the scope). */
  firstClaimMs: number;
  terminalMs: number;
  /** Pids of processes that held the run and lost it to a later claim (killed mid-run). */
  interruptedPids: number[];
}

/**
 * Checks one run: I1 (terminal, succeeded — or failed EFFECT_OUTCOME_UNKNOWN when its
 * agent says `fail` and a call was uncertain), I4, I5, I6, I11 and the resume policy.
 * Returns null when the run is lost (then nothing else about it is checked).
 */
export async function checkRun(
  store: Store,
  tenant: string,
  check: RunCheck,
  f: Findings,
): Promise<CheckedRun | null> {
  const { runId } = check;
  const problem = (text: string): void => {
    f.problems.push(`${runId}: ${text}`);
  };
  const run = await store.getRun(tenant, runId);
  if (!run) {
    f.lost += 1;
    problem('I1: no such run');
    return null;
  }
  const trace = (await store.getTrace(tenant, runId, 0, 10_000)) ?? [];
  const entries = await store.loadEntries(runId);
  const { eventAttempt, pidClaims, claimPids } = attemptsOf(trace);

  // Resume policy: which calls a resumed attempt found in flight with an unknown outcome.
  const uncertainCalls = new Set<string>();
  for (const event of trace.filter((e) => e.type === 'run.resumed')) {
    for (const callId of (event.data.uncertain_calls as string[] | undefined) ?? []) {
      uncertainCalls.add(callId);
    }
  }
  f.uncertain += uncertainCalls.size;
  const mustFail = check.onUncertain === 'fail' && uncertainCalls.size > 0;
  if (mustFail) {
    if (run.status !== 'failed' || run.error?.code !== 'EFFECT_OUTCOME_UNKNOWN') {
      f.resume_violations += 1;
      problem(`policy fail: ${run.status} ${run.error?.code ?? ''} with uncertain calls`);
    }
  } else if (run.status !== 'succeeded' || !run.output) {
    f.lost += 1;
    problem(`I1: run is ${run.status} ${run.error?.code ?? ''}`);
    return null;
  }
  const unknownResults = new Set(
    entries.flatMap((entry) =>
      entry.kind === 'tool_result' && entry.body.error?.code === 'OUTCOME_UNKNOWN'
        ? [entry.body.call_id]
        : [],
    ),
  );
  const expectedUnknown = check.onUncertain === 'tell_model' ? uncertainCalls : new Set();
  if ([...unknownResults].sort().join() !== [...expectedUnknown].sort().join()) {
    f.resume_violations += 1;
    problem(`OUTCOME_UNKNOWN for [${[...unknownResults]}], uncertain [${[...uncertainCalls]}]`);
  }

  // I5: one assistant entry per step; recorded model responses never requested again.
  const assistants = entries.filter((entry) => entry.kind === 'assistant').length;
  if (assistants !== run.steps) {
    f.step_regressions += 1;
    problem(`I5: ${assistants} assistant entries, ${run.steps} steps`);
  }
  let lastStep = 0;
  for (const event of trace.filter((e) => e.type === 'model.response')) {
    const step = Number(event.data.step);
    if (step <= lastStep) {
      f.step_regressions += 1;
      problem(`I5: model.response step ${step} after step ${lastStep}`);
    }
    lastStep = step;
  }

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
    if (event.type === 'tool.result' && !recordedAt.has(event.data.call_id)) {
      recordedAt.set(event.data.call_id, eventAttempt[index] ?? 0);
    }
  });
  const perKey = new Map<string, SinkEffect[]>();
  for (const effect of check.effects) {
    perKey.set(effect.idempotency_key, [...(perKey.get(effect.idempotency_key) ?? []), effect]);
    if (effect.idempotency_key !== `${runId}:${effect.call_id}`) {
      f.key_mismatch += 1;
      problem(`I4: key ${effect.idempotency_key} for ${effect.call_id}`);
    }
    const attempt = attemptOfEffect(pidClaims.get(effect.pid), effect.t_start);
    const recorded = recordedAt.get(effect.call_id);
    if (attempt === undefined) problem(`sink: pid ${effect.pid} claimed no attempt`);
    else if (recorded !== undefined && attempt > recorded) {
      f.recorded_reexec += 1;
      problem(`I4: ${effect.call_id} ran in attempt ${attempt}, recorded in ${recorded}`);
    }
  }
  for (const list of perKey.values()) {
    f.rerun_same_key += list.length - 1;
    if (list[0]?.tool === 'sink_write' && list.length > 1) {
      f.dup_effects += list.length - 1;
      problem(`effectful ${list[0].call_id} executed ${list.length} times`);
    }
  }
  // The sink logs an execution before it answers, so a recorded success was seen there.
  for (const entry of entries) {
    if (entry.kind !== 'tool_result' || !entry.body.ok) continue;
    if (!entry.body.name.startsWith('sink_')) continue;
    if (!perKey.has(`${runId}:${entry.body.call_id}`)) {
      f.missing_effects += 1;
      problem(`${entry.body.call_id} recorded ok, never reached the sink`);
    }
  }

  // I6: outcome ⇔ output ⇔ one terminal event ⇔ delivery iff succeeded with a destination
  // (the thread's side is checkThread's).
  const terminal = trace.filter((e) => TERMINAL_EVENTS.includes(e.type));
  if (terminal.length !== 1 || terminal[0]?.type !== `run.${run.status}`) {
    f.partial += 1;
    problem(`I6: ${run.status} with terminal events ${terminal.map((e) => e.type).join(',')}`);
  }
  if ((run.status === 'succeeded') !== (run.output !== null)) {
    f.partial += 1;
    problem(`I6: ${run.status} with output ${JSON.stringify(run.output)}`);
  }
  const deliveries = (await store.listDeliveries(tenant, { run_id: runId }, 10)).items.length;
  const expectedDeliveries = run.status === 'succeeded' && check.destination ? 1 : 0;
  if (deliveries !== expectedDeliveries) {
    f.partial += 1;
    problem(`I6: ${deliveries} deliveries, expected ${expectedDeliveries}`);
  }

  const claims = trace.filter((e) => e.type === 'run.claimed');
  return {
    run,
    firstClaimMs: Date.parse(claims[0]?.ts ?? ''),
    terminalMs: Date.parse(terminal[0]?.ts ?? ''),
    interruptedPids: claimPids.slice(0, -1),
  };
}

/** I3: the sink executions of one scope, across all its runs, never overlap. */
export function checkScopeEffects(effects: SinkEffect[], f: Findings): void {
  const sorted = [...effects].sort((a, b) => a.t_start - b.t_start);
  for (let i = 1; i < sorted.length; i++) {
    const previous = sorted[i - 1];
    const next = sorted[i];
    if (previous && next && previous.scope === next.scope && next.t_start < previous.t_end) {
      f.overlaps += 1;
      f.problems.push(
        `I3: ${next.run_id}:${next.call_id} started before ${previous.run_id}:${previous.call_id} ended`,
      );
    }
  }
}

/** I9 (order): each run of a scope is first claimed after the one submitted before it ended. */
export function checkLaneOrder(runsInSubmissionOrder: CheckedRun[], f: Findings): void {
  for (let i = 1; i < runsInSubmissionOrder.length; i++) {
    const previous = runsInSubmissionOrder[i - 1];
    const next = runsInSubmissionOrder[i];
    if (previous && next && !(next.firstClaimMs >= previous.terminalMs)) {
      f.fifo_violations += 1;
      f.problems.push(`I9: ${next.run.run_id} claimed before ${previous.run.run_id} ended`);
    }
  }
}

/**
 * I9 (content) and I6 (the turn once): the thread holds the last `contextWindow` of the
 * scope's succeeded turns in submission order, user then assistant, and counts them all.
 */
export async function checkThread(
  store: Store,
  thread: { tenant: string; agent: string; scope: string; contextWindow: number },
  succeededInOrder: string[],
  f: Findings,
): Promise<void> {
  const found = await store.getThread(thread.tenant, thread.agent, thread.scope);
  const kept = thread.contextWindow === 0 ? [] : succeededInOrder.slice(-thread.contextWindow);
  const expected = kept.flatMap((runId) => [`user:${runId}`, `assistant:${runId}`]);
  const actual = (found?.messages ?? []).map((message) => `${message.role}:${message.run_id}`);
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    f.partial += 1;
    f.problems.push(`I9: thread ${thread.scope} is [${actual}], expected [${expected}]`);
  }
  if ((found?.turns ?? 0) !== succeededInOrder.length) {
    f.partial += 1;
    f.problems.push(
      `I9: thread ${thread.scope} counts ${found?.turns ?? 0} turns, ${succeededInOrder.length} succeeded`,
    );
  }
}

/** Every run of the scope, all pages. */
export async function runsOfScope(store: Store, tenant: string, scope: string): Promise<Run[]> {
  const runs: Run[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listRuns(tenant, { scope }, 200, cursor);
    runs.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return runs;
}

/** I1/I2: exactly one run per request id, and it is the run the submit answered with. */
export function checkRequestIds(
  runs: Run[],
  turns: { requestId: string; runId: string }[],
  f: Findings,
): void {
  for (const turn of turns) {
    const mine = runs.filter((run) => run.request_id === turn.requestId);
    if (mine.length !== 1 || mine[0]?.run_id !== turn.runId) {
      f.run_count_errors += 1;
      f.problems.push(
        `I1: runs [${mine.map((run) => run.run_id)}] for ${turn.requestId}, answered ${turn.runId}`,
      );
    }
  }
}

export function addFindings(into: Findings, from: Findings): void {
  for (const key of Object.keys(from) as (keyof Findings)[]) {
    if (key === 'problems') into.problems.push(...from.problems);
    else into[key] += from[key];
  }
}
