// One tool call from the model's raw call to a `tool_result` body (spec/agent-loop.md
// step 5). Every failure becomes `{ok: false, error: {code, message}}` for the model;
// nothing here throws for a bad call, and nothing here writes to the store.
//
// Result codes (plain strings, listed in docs/reliability.md):
//   TOOL_NOT_FOUND     no tool of that name exists
//   TOOL_NOT_ALLOWED   the tool exists but is not visible to this agent
//   INVALID_ARGUMENTS  arguments are not a JSON object text, or fail the tool's schema
//   TOOL_FAILED        the tool threw (a ToolError keeps its own code instead)
//   TOOL_TIMEOUT       tool_timeout_ms (clamped to the run deadline) passed
//   TOOL_ABORTED       the run's abort signal fired while the tool ran
//
// A tool that ignores its abort signal cannot be stopped from here: on timeout or abort
// the loop stops waiting for it and moves on; whatever it still does happens unobserved.

import type { ToolRegistry } from '../tools/registry.ts';
import type { AnyToolSpec, ToolContext, ToolPorts } from '../tools/tool.ts';
import { nestingProblem } from '../nesting.ts';
import { ToolError } from '../tools/tool.ts';
import type { Agent, JsonValue, RunError, ToolCall, ToolResultBody } from '../types.ts';

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

export type PreparedCall =
  | { kind: 'rejected'; result: ToolResultBody }
  | { kind: 'ready'; tool: AnyToolSpec; input: unknown };

export function idempotencyKey(runId: string, callId: string): string {
  return `${runId}:${callId}`;
}

function failure(call: ToolCall, error: RunError, durationMs = 0): ToolResultBody {
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

/** Lookup, visibility, JSON parsing and the schema check — in that order. */
export function prepareCall(call: ToolCall, env: ToolCallEnv): PreparedCall {
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
        message: `arguments are not valid JSON: ${(error as Error).message}`,
      }),
    };
  }
  // Bounded before zod walks it: the model writes these, and a pathological nesting
  // would overflow the stack in the schema check instead of being a tool error.
  const tooDeep = nestingProblem(raw, 'arguments');
  if (tooDeep) {
    return {
      kind: 'rejected',
      result: failure(call, { code: 'INVALID_ARGUMENTS', message: tooDeep.message }),
    };
  }
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
        return failure(
          call,
          { code: 'TOOL_FAILED', message: `the result is not JSON: ${(error as Error).message}` },
          duration,
        );
      }
    case 'threw': {
      const error = settled.error;
      if (error instanceof ToolError) {
        return failure(call, { code: error.code, message: error.message }, duration);
      }
      const message = error instanceof Error ? error.message : String(error);
      return failure(call, { code: 'TOOL_FAILED', message }, duration);
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
