// How a thread's rolling context grows, the same for every backend: what it keeps of a
// turn's input, how many turns it keeps, and how a thread row reads. Only the SQL that
// loads and writes the row differs between backends.

import type { JsonObject, Thread, ThreadMessage, ThreadSummary } from '../../types.ts';
import { iso, parseJson } from '../rows.ts';
import type { RunRow } from '../rows.ts';

export interface ThreadRow {
  tenant: string;
  agent: string;
  scope: string;
  revision: number;
  turns: number;
  messages: string;
  updated_at: number;
}

/** What the thread remembers of a turn's input: its text, or the payload as JSON. */
function userContent(input: JsonObject): string {
  return typeof input.text === 'string' ? input.text : JSON.stringify(input);
}

/** Keeps the messages of the newest `window` turns (a turn = the messages of one run). */
function lastTurns(messages: readonly ThreadMessage[], window: number): ThreadMessage[] {
  const runs: string[] = [];
  for (const message of messages) {
    if (runs.at(-1) !== message.run_id) runs.push(message.run_id);
  }
  const kept = new Set(window > 0 ? runs.slice(-window) : []);
  return messages.filter((message) => kept.has(message.run_id));
}

/** The thread's messages once the succeeded `run` answered `replyText` at `now`. */
export function messagesAfterTurn(
  existing: ThreadRow | undefined,
  run: RunRow,
  replyText: string,
  contextWindow: number,
  now: number,
  steeredTexts: readonly string[] = [],
): ThreadMessage[] {
  const ts = iso(now);
  const steered = steeredTexts.map((content): ThreadMessage => ({
    role: 'user',
    content,
    run_id: run.run_id,
    ts,
  }));
  return lastTurns(
    [
      ...(existing ? parseJson<ThreadMessage[]>(existing.messages) : []),
      {
        role: 'user',
        content: userContent(parseJson<JsonObject>(run.input)),
        run_id: run.run_id,
        ts,
      },
      ...steered,
      { role: 'assistant', content: replyText, run_id: run.run_id, ts },
    ],
    contextWindow,
  );
}

export function toThread(row: ThreadRow): Thread {
  return {
    scope: row.scope,
    revision: row.revision,
    turns: row.turns,
    messages: parseJson<ThreadMessage[]>(row.messages),
    updated_at: iso(row.updated_at),
  };
}

export function toThreadSummary(row: ThreadRow): ThreadSummary {
  return {
    scope: row.scope,
    turns: row.turns,
    revision: row.revision,
    updated_at: iso(row.updated_at),
  };
}

/** The keyset of thread listings: newest first, then scope. */
export function threadKey(row: ThreadRow): (string | number)[] {
  return [row.updated_at, row.scope];
}
