// Tool calls of an assistant entry that have no result yet. Every call gets exactly one
// `tool_result` entry before the next model call (transcript integrity), appended in
// its own transaction with its `tool.result` trace event as soon as it exists.
//
// No tool runs yet: every call is answered TOOL_NOT_FOUND. The tool registry (next
// issue) replaces `answerCall` with lookup, allowlist, schema check, timeout and the
// resume policy for calls that were in flight.

import type { ToolCall, ToolResultBody } from '../types.ts';

export interface ToolCallRecorder {
  /** Appends one result entry + its trace event in one transaction (fenced). */
  record(result: ToolResultBody): Promise<void>;
}

/** The calls of `calls` whose call_id has no recorded result. */
export function pendingCalls(
  calls: readonly ToolCall[],
  answered: ReadonlySet<string>,
): ToolCall[] {
  return calls.filter((call) => !answered.has(call.call_id));
}

function answerCall(call: ToolCall): ToolResultBody {
  return {
    call_id: call.call_id,
    name: call.name,
    ok: false,
    error: { code: 'TOOL_NOT_FOUND', message: `no tool named "${call.name}" is available` },
    duration_ms: 0,
  };
}

/**
 * Answers each pending call in order. Returns the number of calls that actually ran a
 * tool (for usage.tool_calls): none yet.
 */
export async function runToolCalls(
  calls: readonly ToolCall[],
  recorder: ToolCallRecorder,
  shouldStop: () => boolean,
): Promise<number> {
  for (const call of calls) {
    if (shouldStop()) break;
    await recorder.record(answerCall(call));
  }
  return 0;
}
