// The tool half of a step: answers the tool calls of an assistant entry that have no
// result yet, in order — also the calls of one `@parallel` step. Sequential execution
// keeps the journal's order equal to the execution order and keeps at most one call of
// a run in flight, which is what makes the resume rules exact. Every call gets exactly
// one `tool_result` entry before the next model call (transcript integrity).
//
// Journal per call (docs/reliability.md, "Journal of a tool call"):
//   rejected (unknown / not allowed / bad arguments): `tool.call` + `tool.result` + the
//     result entry in one transaction — nothing ran;
//   executed: `tool.call` committed first (the intent record), then fault point
//     `tool.before_call`, the tool, fault point `tool.after_call`, then the result entry
//     + `tool.result` in one transaction. A `tool.call` without a result therefore means
//     "was in flight"; no `tool.call` means "never started" (see resume-plan.ts).
//
// Every failure of a call becomes `{ok: false, error: {code, message}}` for the model
// (codes: TOOL_RESULT_CODES in src/errors.ts); nothing here throws for a bad call. A
// tool that ignores its abort signal cannot be stopped from here: on timeout or abort
// the loop stops waiting for it and moves on; whatever it still does happens unobserved.

import type { Failpoints } from '../failpoints.ts';
import type { ToolDefinition } from '../providers/provider.ts';
import { nestingProblem } from '../nesting.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { AnyToolSpec, ToolContext, ToolPorts } from '../tools/tool.ts';
import { ToolError } from '../tools/tool.ts';
import type {
  Agent,
  EntryBody,
  Run,
  JsonValue,
  ToolCall,
  ToolResultBody,
  ToolResultError,
  Usage,
} from '../types.ts';
import type { RunEvent } from '../events.ts';
import type { ApprovalGate } from './approvals.ts';
import type { RunControl } from './run-control.ts';
import type { AttemptTrace } from './tracer.ts';
import { RunStopped } from './run-control.ts';
import { crashedCallResult, outcomeUnknownResult } from './resume-plan.ts';
import type { PortScope, ToolPortStore } from './tool-ports.ts';
import { createToolPorts } from './tool-ports.ts';

/** Where a call runs: one per run attempt. */
export interface ToolCallEnv {
  registry: ToolRegistry;
  agent: Agent;
  run: { tenant: string; agent: string; scope: string; run_id: string };
  ports: ToolPorts;
  /** The run's tool signal: cancel, lease loss, run deadline, end of the shutdown grace. */
  signal: AbortSignal;
  /** Epoch ms when the run's timeout_ms runs out; a call never outlives it. */
  runDeadline: number;
  now: () => number;
}

/** What answering a step's calls needs from the run attempt (run-loop.ts). */
export interface ToolStepDeps {
  env: ToolCallEnv;
  attempt: number;
  control: RunControl;
  failpoints: Failpoints;
  /** The run's usage; tool_calls counts executions and is checkpointed with the intent. */
  usage: Usage;
  /** One fenced transaction (run-loop's checkpoint). */
  checkpoint(entries: EntryBody[], events: RunEvent[]): Promise<void>;
  /** Calls that need a person's decision (approvals.ts); absent = none do. */
  approvals?: ApprovalGate;
  /** Spans of the attempt (tracer.ts); absent = none. */
  trace?: AttemptTrace;
}

/** The tools an agent's model is offered: its visible subset of the registry. */
export function toolDefinitions(registry: ToolRegistry, agent: Agent): ToolDefinition[] {
  return registry.visibleTo(agent).map((tool) => {
    const { name, description, input_schema } = registry.describe(tool);
    return { name, description, input_schema };
  });
}

/** The environment of a run attempt's calls; the ports are bound to the run's scope. */
export function toolCallEnv(
  deps: { store: ToolPortStore; toolPorts?: (scope: PortScope) => ToolPorts },
  run: Run,
  agent: Agent,
  registry: ToolRegistry,
  control: RunControl,
  clock: { now: () => number; runDeadline: number },
): ToolCallEnv {
  const { now, runDeadline } = clock;
  const scope = { tenant: run.tenant, agent: run.agent, scope: run.scope };
  const ports = deps.toolPorts
    ? deps.toolPorts(scope)
    : createToolPorts({ store: deps.store, now }, scope);
  const signal = control.toolSignal;
  return {
    registry,
    agent,
    run: { tenant: run.tenant, agent: run.agent, scope: run.scope, run_id: run.run_id },
    ports,
    signal,
    runDeadline,
    now,
  };
}

interface ToolStep {
  /** The step (1-based) of the assistant entry whose calls these are. */
  step: number;
  pending: readonly ToolCall[];
  /** Calls found in flight at resume whose effect is unknown: answered OUTCOME_UNKNOWN. */
  uncertain: ReadonlySet<string>;
  /** Calls found in flight at resume too often to run again: answered TOOL_CRASHED. */
  crashed: ReadonlySet<string>;
}

type PreparedCall =
  | { kind: 'rejected'; result: ToolResultBody }
  | { kind: 'ready'; tool: AnyToolSpec; input: unknown };

function idempotencyKey(runId: string, callId: string): string {
  return `${runId}:${callId}`;
}

function failure(call: ToolCall, error: ToolResultError, durationMs = 0): ToolResultBody {
  return { call_id: call.call_id, name: call.name, ok: false, error, duration_ms: durationMs };
}

function describeIssues(issues: readonly { path: PropertyKey[]; message: string }[]): string {
  return issues
    .map((issue) => {
      const path = issue.path.map(String).join('.');
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join('; ');
}

/** Argument text longer than this is refused before it is parsed. */
const MAX_ARGUMENT_CHARS = 1_000_000;
/** Arguments nested deeper than this are refused before they are parsed. */
const MAX_ARGUMENT_DEPTH = 64;

/** What a thrown value says, whatever was thrown (an Error, a string, a null-prototype object). */
function describeThrown(error: unknown): string {
  if (error instanceof Error) return error.message;
  try {
    return String(error);
  } catch {
    return Object.prototype.toString.call(error);
  }
}

function invalidArguments(call: ToolCall, message: string): PreparedCall {
  return { kind: 'rejected', result: failure(call, { code: 'INVALID_ARGUMENTS', message }) };
}

/**
 * Lookup, visibility, size and depth bounds, JSON parsing and the schema check — in that
 * order. Never throws: whatever the model sent (or a schema that breaks on it) becomes a
 * rejected call the model can read.
 */
export function prepareCall(call: ToolCall, env: ToolCallEnv): PreparedCall {
  try {
    return prepareUnguarded(call, env);
  } catch (error) {
    return invalidArguments(call, `arguments could not be checked: ${describeThrown(error)}`);
  }
}

function prepareUnguarded(call: ToolCall, env: ToolCallEnv): PreparedCall {
  const tool = env.registry.get(call.name);
  if (!tool) {
    return {
      kind: 'rejected',
      result: failure(call, {
        code: 'TOOL_NOT_FOUND',
        message: `no tool named "${call.name}" exists`,
      }),
    };
  }
  if (!env.registry.visibleTo(env.agent).includes(tool)) {
    return {
      kind: 'rejected',
      result: failure(call, {
        code: 'TOOL_NOT_ALLOWED',
        message: `this agent may not use the tool "${call.name}"`,
      }),
    };
  }
  if (typeof call.arguments !== 'string') {
    return invalidArguments(call, 'arguments must be a JSON object text');
  }
  if (call.arguments.length > MAX_ARGUMENT_CHARS) {
    const message = `arguments are ${call.arguments.length} characters; at most ${MAX_ARGUMENT_CHARS}`;
    return invalidArguments(call, message);
  }
  let raw: unknown;
  // Some providers send an empty argument text for a tool without parameters.
  const text = call.arguments.trim() === '' ? '{}' : call.arguments;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return {
      kind: 'rejected',
      result: failure(call, {
        code: 'INVALID_ARGUMENTS',
        message: `arguments are not valid JSON: ${describeThrown(error)}`,
      }),
    };
  }
  // Bounded before zod walks it: a pathological nesting would overflow the stack in the
  // schema check instead of being a tool error (src/nesting.ts, the one depth check).
  const tooDeep = nestingProblem(raw, 'arguments', MAX_ARGUMENT_DEPTH);
  if (tooDeep) return invalidArguments(call, tooDeep.message);
  const parsed = tool.input.safeParse(raw);
  if (!parsed.success) {
    return {
      kind: 'rejected',
      result: failure(call, {
        code: 'INVALID_ARGUMENTS',
        message: `arguments do not match the schema of ${call.name}: ${describeIssues(parsed.error.issues)}`,
      }),
    };
  }
  return { kind: 'ready', tool, input: parsed.data };
}

/** Normalises what a tool returned into plain JSON (undefined → null, no class instances). */
function asJson(value: unknown): JsonValue {
  if (value === undefined) return null;
  return JSON.parse(JSON.stringify(value)) as JsonValue;
}

type Settled =
  | { kind: 'returned'; value: unknown }
  | { kind: 'threw'; error: unknown }
  | { kind: 'timeout' }
  | { kind: 'aborted' };

/**
 * Runs a prepared call with its deadline (tool_timeout_ms clamped to the run deadline)
 * and the run's abort signal. The tool sees one signal that fires on either.
 */
export async function executeCall(
  call: ToolCall,
  tool: AnyToolSpec,
  input: unknown,
  env: ToolCallEnv,
): Promise<ToolResultBody> {
  const started = env.now();
  const deadline = Math.min(started + env.agent.tool_timeout_ms, env.runDeadline);
  const timeout = new AbortController();
  const signal = AbortSignal.any([env.signal, timeout.signal]);
  const context: ToolContext = {
    tenant: env.run.tenant,
    agent: env.run.agent,
    scope: env.run.scope,
    run_id: env.run.run_id,
    call_id: call.call_id,
    idempotency_key: idempotencyKey(env.run.run_id, call.call_id),
    deadline,
    signal,
    ports: env.ports,
  };

  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<Settled>((resolve) => {
    timer = setTimeout(
      () => {
        timeout.abort(new Error('tool timeout'));
        resolve({ kind: 'timeout' });
      },
      Math.max(0, deadline - started),
    );
    onAbort = () => resolve({ kind: 'aborted' });
    if (env.signal.aborted) onAbort();
    else env.signal.addEventListener('abort', onAbort, { once: true });
  });
  const running: Promise<Settled> = (async () => {
    try {
      return { kind: 'returned', value: await tool.run(input as never, context) };
    } catch (error) {
      return { kind: 'threw', error };
    }
  })();

  let settled: Settled;
  try {
    settled = await Promise.race([running, stopped]);
  } finally {
    clearTimeout(timer);
    if (onAbort) env.signal.removeEventListener('abort', onAbort);
  }
  // A tool that rejects because its signal fired was stopped, not broken.
  if (settled.kind === 'threw' && env.signal.aborted) settled = { kind: 'aborted' };
  else if (settled.kind === 'threw' && timeout.signal.aborted) settled = { kind: 'timeout' };

  const duration = env.now() - started;
  switch (settled.kind) {
    case 'returned':
      try {
        return {
          call_id: call.call_id,
          name: call.name,
          ok: true,
          result: asJson(settled.value),
          duration_ms: duration,
        };
      } catch (error) {
        const message = `the result is not JSON: ${describeThrown(error)}`;
        return failure(call, { code: 'TOOL_FAILED', message }, duration);
      }
    case 'threw': {
      const error = settled.error;
      if (error instanceof ToolError) {
        return failure(call, { code: error.code, message: error.message }, duration);
      }
      return failure(call, { code: 'TOOL_FAILED', message: describeThrown(error) }, duration);
    }
    case 'timeout':
      return failure(
        call,
        {
          code: 'TOOL_TIMEOUT',
          message: `${call.name} did not finish within ${deadline - started} ms; it may or may not have taken effect`,
        },
        duration,
      );
    case 'aborted':
      return failure(
        call,
        {
          code: 'TOOL_ABORTED',
          message: `${call.name} was aborted because the run is stopping; it may or may not have taken effect`,
        },
        duration,
      );
  }
}

function callEvent(
  deps: ToolStepDeps,
  step: number,
  call: { call_id: string; name: string },
  tool?: AnyToolSpec,
): RunEvent {
  return {
    type: 'tool.call',
    data: {
      step,
      call_id: call.call_id,
      name: call.name,
      attempt: deps.attempt,
      ...(tool && {
        effect: tool.effect,
        idempotency_key: idempotencyKey(deps.env.run.run_id, call.call_id),
      }),
    },
  };
}

/**
 * Appends one result entry + its `tool.result` event in one transaction (fenced);
 * `intentRecorded` false adds the call's `tool.call` event to the same transaction.
 */
async function recordResult(
  deps: ToolStepDeps,
  step: number,
  result: ToolResultBody,
  intentRecorded: boolean,
): Promise<void> {
  // Aborted at the end of a shutdown grace: the call stays "in flight", so the next
  // attempt applies the resume rules (re-run, or OUTCOME_UNKNOWN) instead.
  if (result.error?.code === 'TOOL_ABORTED' && deps.control.cause === 'shutdown') {
    throw new RunStopped('shutdown');
  }
  const resultEvent: RunEvent = { type: 'tool.result', data: result };
  await deps.checkpoint(
    [{ kind: 'tool_result', body: result }],
    intentRecorded ? [resultEvent] : [callEvent(deps, step, result), resultEvent],
  );
}

/** Answers every pending call of the step in order; stops early when the run stops. */
export async function answerToolCalls(deps: ToolStepDeps, work: ToolStep): Promise<void> {
  const { step } = work;
  for (const call of work.pending) {
    if (deps.control.stopped) return;
    if (work.uncertain.has(call.call_id)) {
      // Its `tool.call` is in the trace already (an earlier attempt started it).
      await recordResult(deps, step, outcomeUnknownResult(call), true);
      continue;
    }
    if (work.crashed.has(call.call_id)) {
      await recordResult(deps, step, crashedCallResult(call), true);
      continue;
    }
    const prepared = prepareCall(call, deps.env);
    if (prepared.kind === 'rejected') {
      await recordResult(deps, step, prepared.result, false);
      continue;
    }
    const verdict = (await deps.approvals?.check(call, step)) ?? { kind: 'run' };
    if (verdict.kind === 'refused') {
      await recordResult(deps, step, verdict.result, false);
      continue;
    }
    // The run is `waiting` now (committed): this attempt ends without another write.
    if (verdict.kind === 'waiting') throw new RunStopped('waiting');
    // The intent record: committed before the tool runs.
    deps.usage.tool_calls += 1;
    deps.trace?.toolStarted(step, {
      call_id: call.call_id,
      name: call.name,
      effect: prepared.tool.effect,
    });
    await deps.checkpoint([], [callEvent(deps, step, call, prepared.tool)]);
    deps.failpoints.hit('tool.before_call');
    const result = await executeCall(call, prepared.tool, prepared.input, deps.env);
    deps.failpoints.hit('tool.after_call');
    deps.trace?.toolEnded(result);
    await recordResult(deps, step, result, true);
  }
}
