// Which tool calls of a run still need a result: read from the entries alone, so a
// resumed attempt and a running one agree.

import type { RunEntry, ToolCall } from '../types.ts';

/** The calls of `calls` whose call_id has no recorded result. */
function pendingCalls(calls: readonly ToolCall[], answered: ReadonlySet<string>): ToolCall[] {
  return calls.filter((call) => !answered.has(call.call_id));
}

/** The last assistant entry's step and its calls without a recorded result. */
export function openCalls(
  entries: readonly RunEntry[],
): { step: number; pending: ToolCall[] } | null {
  let step = 0;
  let last: RunEntry | undefined;
  const answered = new Set<string>();
  for (const entry of entries) {
    if (entry.kind === 'assistant') {
      step += 1;
      last = entry;
      answered.clear();
    } else if (entry.kind === 'tool_result') answered.add(entry.body.call_id);
  }
  if (last?.kind !== 'assistant' || last.body.tool_calls.length === 0) return null;
  return { step, pending: pendingCalls(last.body.tool_calls, answered) };
}
