// The final answer of a run: text becomes `{reply: text}`, a JSON object answer is used
// as is; an answer that misses output_schema gets one repair note naming the problems,
// and a second miss fails the run OUTPUT_INVALID (docs/http-api.md, agent document).

import type { JsonObject, JsonValue, RunEntry, RunOutcome } from '../types.ts';
import { runFailed } from './finalize.ts';
import { checkOutputSchema } from './output-schema.ts';

/** A JSON object answer is used as is; anything else becomes `{reply: text}`. */
export function finalOutput(text: string): JsonObject {
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

export function repairNote(problems: string[], schema: JsonObject): string {
  return [
    'Your final answer does not match the required output schema:',
    ...problems.map((problem) => `- ${problem}`),
    `Answer again with only a JSON object that matches this schema: ${JSON.stringify(schema)}`,
  ].join('\n');
}

export type AnswerVerdict =
  { kind: 'final'; outcome: RunOutcome } | { kind: 'repair'; note: string };

/** Judges the last (final) answer of a run against the agent's output_schema. */
export function judgeFinalAnswer(
  text: string,
  agent: { output_schema?: JsonObject; context_window: number },
  entries: readonly RunEntry[],
): AnswerVerdict {
  const output = finalOutput(text);
  const schema = agent.output_schema;
  const problems = schema ? checkOutputSchema(schema, output) : [];
  if (problems.length === 0) {
    const outcome: RunOutcome = {
      status: 'succeeded',
      output,
      reply_text: text,
      context_window: agent.context_window,
    };
    return { kind: 'final', outcome };
  }
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
