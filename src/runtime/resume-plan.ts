// What a reclaimed run does with the calls of its last assistant entry that have no
// result (docs/reliability.md, "Journal of a tool call"), sharpened by the intent record:
//
//   no `tool.call` event for it in this step → it never started: run it normally;
//   a `tool.call` event but no result → it was in flight when the runtime stopped:
//     read_only / idempotent → run it again, with the same idempotency key — unless it
//       was already started MAX_CALL_CRASHES times: then a call that takes the process
//       down with it (a hostile module, a tool that exhausts memory) would do so on every
//       restart, so it is answered TOOL_CRASHED instead and the run goes on;
//     effectful (or a tool that no longer exists) → its outcome is unknown:
//       on_uncertain_effect "tell_model" → an OUTCOME_UNKNOWN result for the model,
//       "fail" → the run fails EFFECT_OUTCOME_UNKNOWN.
//
// Without the intent record every unanswered effectful call would be uncertain; with it,
// a call that provably never started runs instead of asking the model.

import type { RunStore } from '../store/store.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { RunEntry, ToolCall, ToolResultBody, TraceEvent } from '../types.ts';
import type { RunEvent } from '../events.ts';
import { openCalls } from './open-calls.ts';

/** Crashed attempts during one repeatable call after which it is not run again. */
export const MAX_CALL_CRASHES = 2;

export const OUTCOME_UNKNOWN_MESSAGE =
  'the runtime stopped while this call was in flight; it may or may not have taken effect — check before repeating it';

interface ResumePlan {
  /** In flight, safe to repeat: run again with the same key. */
  rerun: string[];
  /** In flight, effectful: outcome unknown. */
  uncertain: string[];
  /** In flight on MAX_CALL_CRASHES attempts already: answered TOOL_CRASHED, not run. */
  crashed: string[];
  /** Never started: run normally. */
  not_started: string[];
}

/** The `run.resumed` event of a reclaimed attempt: what it loaded and its plan. */
export function resumedEvent(
  attempt: number,
  entriesLoaded: number,
  steps: number,
  plan: ResumePlan,
): RunEvent {
  return {
    type: 'run.resumed',
    data: {
      attempt,
      entries_loaded: entriesLoaded,
      steps,
      rerun_calls: plan.rerun,
      uncertain_calls: plan.uncertain,
      crashed_calls: plan.crashed,
      not_started_calls: plan.not_started,
    },
  };
}

export function outcomeUnknownResult(call: ToolCall): ToolResultBody {
  return {
    call_id: call.call_id,
    name: call.name,
    ok: false,
    error: { code: 'OUTCOME_UNKNOWN', message: OUTCOME_UNKNOWN_MESSAGE },
    duration_ms: 0,
  };
}

export function crashedCallResult(call: ToolCall): ToolResultBody {
  return {
    call_id: call.call_id,
    name: call.name,
    ok: false,
    error: {
      code: 'TOOL_CRASHED',
      message: `keel crashed during this call on ${MAX_CALL_CRASHES} attempts; it is not run again`,
    },
    duration_ms: 0,
  };
}

function emptyPlan(): ResumePlan {
  return { rerun: [], uncertain: [], crashed: [], not_started: [] };
}

function planResume(
  pending: readonly ToolCall[],
  started: ReadonlyMap<string, number>,
  registry: ToolRegistry,
): ResumePlan {
  const plan = emptyPlan();
  for (const call of pending) {
    const crashes = started.get(call.call_id);
    if (crashes === undefined) plan.not_started.push(call.call_id);
    else if ((registry.get(call.name)?.effect ?? 'effectful') === 'effectful') {
      plan.uncertain.push(call.call_id);
    } else if (crashes >= MAX_CALL_CRASHES) plan.crashed.push(call.call_id);
    else plan.rerun.push(call.call_id);
  }
  return plan;
}

const TRACE_PAGE = 1000;

/** Visits every trace event of the run, in order, a page at a time. */
async function scanTrace(
  store: Pick<RunStore, 'getTrace'>,
  run: { tenant: string; run_id: string },
  visit: (event: TraceEvent) => void,
): Promise<void> {
  for (let after = 0; ;) {
    const events = (await store.getTrace(run.tenant, run.run_id, after, TRACE_PAGE)) ?? [];
    events.forEach(visit);
    const last = events[events.length - 1];
    if (!last || events.length < TRACE_PAGE) return;
    after = last.seq;
  }
}

/**
 * call_id → how many earlier attempts that crashed recorded its `tool.call` (intent) in
 * `step`: a call with an intent is in the map; one ended by a shutdown grace (its attempt
 * recorded `run.released`) counts 0, so only a call that crashes keel is refused.
 */
async function startedCalls(
  store: Pick<RunStore, 'getTrace'>,
  run: { tenant: string; run_id: string },
  step: number,
): Promise<Map<string, number>> {
  const intents: { callId: string; attempt: unknown }[] = [];
  const released = new Set<unknown>();
  await scanTrace(store, run, (event) => {
    if (event.type === 'tool.call' && event.data.step === step) {
      intents.push({ callId: String(event.data.call_id), attempt: event.data.attempt });
    } else if (event.type === 'run.released') released.add(event.data.attempt);
  });
  const started = new Map<string, number>();
  for (const { callId, attempt } of intents) {
    started.set(callId, (started.get(callId) ?? 0) + (released.has(attempt) ? 0 : 1));
  }
  return started;
}

/**
 * Earlier attempts of the run that crashed: every attempt before this one ended without
 * a finalize (else the run would not be claimable), and those that stopped gracefully
 * recorded `run.released`. SIGKILL, an exception escaping the attempt, a stalled worker
 * whose lease expired — all the rest count.
 */
export async function crashedAttempts(
  store: Pick<RunStore, 'getTrace'>,
  run: { tenant: string; run_id: string; attempt: number },
): Promise<number> {
  if (run.attempt <= 1) return 0;
  let released = 0;
  await scanTrace(store, run, (event) => {
    if (event.type === 'run.released') released += 1;
  });
  return run.attempt - 1 - released;
}

/** The plan for the last step's unanswered calls of a reclaimed run (empty when none). */
export async function planForResume(
  store: Pick<RunStore, 'getTrace'>,
  run: { tenant: string; run_id: string },
  entries: readonly RunEntry[],
  registry: ToolRegistry,
): Promise<ResumePlan> {
  const open = openCalls(entries);
  if (!open || open.pending.length === 0) return emptyPlan();
  return planResume(open.pending, await startedCalls(store, run, open.step), registry);
}
