// The final answer of a run: text becomes `{reply: text}`, a JSON object answer is used
// as is; an answer that misses output_schema gets one repair note naming the problems,
// and a second miss fails the run OUTPUT_INVALID (docs/http-api.md, agent document). A
// schema that cannot be used at all fails the run at once.

import type { JsonObject, JsonValue, RunEntry, RunOutcome } from '../types.ts';
import { runFailed } from './finalize.ts';
import type { OutputSchemas } from './output-schema.ts';

/** A JSON object answer is used as is; anything else becomes `{reply: text}`. */
function finalOutput(text: string): JsonObject {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    try {
      const value = JSON.parse(trimmed) as JsonValue;
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value;
    } catch {
      // Not JSON after all: a plain text answer.
    }
  }
  return { reply: text };
}

function repairNote(problems: string[], schema: JsonObject): string {
  return [
    'Your final answer does not match the required output schema:',
    ...problems.map((problem) => `- ${problem}`),
    `Answer again with only a JSON object that matches this schema: ${JSON.stringify(schema)}`,
  ].join('\n');
}

type AnswerVerdict = { kind: 'final'; outcome: RunOutcome } | { kind: 'repair'; note: string };

/** Judges the last (final) answer of a run against the agent's output_schema. */
export function judgeFinalAnswer(
  text: string,
  agent: { output_schema?: JsonObject; context_window: number },
  entries: readonly RunEntry[],
  schemas: OutputSchemas,
): AnswerVerdict {
  const output = finalOutput(text);
  const schema = agent.output_schema;
  const check = schema ? schemas.check(schema, output) : { kind: 'valid' as const };
  if (check.kind === 'unusable') {
    // No answer can fix the schema itself: no repair step.
    const message = `output_schema cannot be used: ${check.reason}`;
    return { kind: 'final', outcome: runFailed('OUTPUT_INVALID', message) };
  }
  if (check.kind === 'valid') {
    const outcome: RunOutcome = {
      status: 'succeeded',
      output,
      reply_text: text,
      context_window: agent.context_window,
    };
    return { kind: 'final', outcome };
  }
  const { problems } = check;
  // Every earlier final answer of this run was invalid (it would have ended the run),
  // so a second one means the repair step is used up.
  const finals = entries.filter(
    (entry) => entry.kind === 'assistant' && entry.body.tool_calls.length === 0,
  ).length;
  if (finals >= 2 || !schema) {
    const message = `the final answer does not match output_schema: ${problems.join('; ')}`;
    return { kind: 'final', outcome: runFailed('OUTPUT_INVALID', message) };
  }
  return { kind: 'repair', note: repairNote(problems, schema) };
}
