// Answers the tool calls of an assistant entry that have no result yet, in order — also
// the calls of one `@parallel` step: sequential execution keeps the journal's order equal
// to the execution order and keeps at most one call of a run in flight, which is what
// makes the resume rules below exact. Every call gets exactly one `tool_result` entry
// before the next model call (transcript integrity).
//
// Journal per call:
//   rejected (unknown / not allowed / bad arguments): `tool.call` + `tool.result` + the
//     result entry in one transaction — nothing ran;
//   executed: `tool.call` committed first (the intent record), then fault point
//     `tool.before_call`, the tool, fault point `tool.after_call`, then the result entry
//     + `tool.result` in one transaction. A `tool.call` without a result therefore means
//     "was in flight"; no `tool.call` means "never started" (see resume-plan.ts).

import type { Failpoints } from '../failpoints.ts';
import type { AnyToolSpec } from '../tools/tool.ts';
import type { ToolCall, ToolResultBody } from '../types.ts';
import { outcomeUnknownResult } from './resume-plan.ts';
import type { ToolCallEnv } from './tool-execution.ts';
import { executeCall, prepareCall } from './tool-execution.ts';

export interface ToolCallJournal {
  /** Commits the `tool.call` event of a call that is about to run (fenced). */
  recordIntent(call: ToolCall, tool: AnyToolSpec): Promise<void>;
  /**
   * Appends one result entry + its `tool.result` event in one transaction (fenced);
   * `intentRecorded` false adds the call's `tool.call` event to the same transaction.
   */
  recordResult(result: ToolResultBody, intentRecorded: boolean): Promise<void>;
}

export interface ToolCallRound {
  env: ToolCallEnv;
  journal: ToolCallJournal;
  failpoints: Failpoints;
  /** Calls found in flight at resume whose effect is unknown: answered OUTCOME_UNKNOWN. */
  uncertain: ReadonlySet<string>;
  /** Checked before each call: a stopping run starts no further call. */
  shouldStop(): boolean;
}

export async function runToolCalls(
  calls: readonly ToolCall[],
  round: ToolCallRound,
): Promise<void> {
  const { env, journal, failpoints } = round;
  for (const call of calls) {
    if (round.shouldStop()) return;
    if (round.uncertain.has(call.call_id)) {
      // Its `tool.call` is in the trace already (an earlier attempt started it).
      await journal.recordResult(outcomeUnknownResult(call), true);
      continue;
    }
    const prepared = prepareCall(call, env);
    if (prepared.kind === 'rejected') {
      await journal.recordResult(prepared.result, false);
      continue;
    }
    await journal.recordIntent(call, prepared.tool);
    failpoints.hit('tool.before_call');
    const result = await executeCall(call, prepared.tool, prepared.input, env);
    failpoints.hit('tool.after_call');
    await journal.recordResult(result, true);
  }
}
