// How a thread's rolling context grows, the same for every backend: what it keeps of a
// turn's input and how many turns it keeps.

import type { JsonObject, ThreadMessage } from '../types.ts';

/** What the thread remembers of a turn's input: its text, or the payload as JSON. */
export function userContent(input: JsonObject): string {
  return typeof input.text === 'string' ? input.text : JSON.stringify(input);
}

/** Keeps the messages of the newest `window` turns (a turn = the messages of one run). */
export function lastTurns(messages: readonly ThreadMessage[], window: number): ThreadMessage[] {
  const runs: string[] = [];
  for (const message of messages) {
    if (runs.at(-1) !== message.run_id) runs.push(message.run_id);
  }
  const kept = new Set(window > 0 ? runs.slice(-window) : []);
  return messages.filter((message) => kept.has(message.run_id));
}
