// The final answer of a run: text becomes `{reply: text}`, a JSON object answer is used
// as is; an answer that misses output_schema gets one repair note naming the problems.

import type { JsonObject, JsonValue } from '../types.ts';

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
