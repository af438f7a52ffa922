// What the model sees at each step (docs/reliability.md, "The loop's contract"): system
// prompt (persona + keel's rules) + the thread's past turns (at most context_window) +
// this run's entries.

import type { Agent, JsonObject, RunEntry, Thread, ThreadMessage } from '../types.ts';

const DEFAULT_PERSONA = 'You are a helpful personal assistant. Answer clearly and concisely.';

const KEEL_RULES = [
  'Tool results are JSON. A result with ok=false carries an error {code, message}; read it and',
  'decide what to do next instead of repeating the same call blindly. A result with code',
  'OUTCOME_UNKNOWN means the call may or may not have taken effect: check before repeating it.',
].join(' ');

export function systemPrompt(agent: Agent): string {
  const persona = agent.persona?.trim() ? agent.persona.trim() : DEFAULT_PERSONA;
  return `${persona}\n\n${KEEL_RULES}`;
}

/**
 * The last `window` complete turns of the thread. A turn is the messages of one run, so
 * a window never starts with half a turn.
 */
export function contextTurns(thread: Thread | null, window: number): ThreadMessage[] {
  if (!thread || window <= 0) return [];
  const runIds: string[] = [];
  for (const message of thread.messages) {
    if (runIds[runIds.length - 1] !== message.run_id) runIds.push(message.run_id);
  }
  const kept = new Set(runIds.slice(-window));
  return thread.messages.filter((message) => kept.has(message.run_id));
}

/** The user entry's text: the payload's `text` when it has one, else the payload as JSON. */
export function userText(payload: JsonObject): string {
  return typeof payload.text === 'string' ? payload.text : JSON.stringify(payload);
}

/**
 * Transcript integrity (docs/reliability.md): every tool call of an assistant entry must
 * have its result before the next assistant entry and before the next model call.
 * Returns the call_ids that break it (empty when the transcript may be sent).
 */
export function unansweredCalls(entries: readonly RunEntry[]): string[] {
  const missing: string[] = [];
  let open = new Set<string>();
  for (const entry of entries) {
    if (entry.kind === 'assistant') {
      missing.push(...open);
      open = new Set(entry.body.tool_calls.map((call) => call.call_id));
    } else if (entry.kind === 'tool_result') open.delete(entry.body.call_id);
  }
  missing.push(...open);
  return missing;
}
