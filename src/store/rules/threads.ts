// How a thread's rolling context grows, the same for every backend: what it keeps of a
// turn's input, how many turns it keeps, and how a thread row reads. Only the SQL that
// loads and writes the row differs between backends.

import type { JsonObject, Thread, ThreadFold, ThreadMessage, ThreadSummary } from '../../types.ts';
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

/** How a summary reads in the thread and to the model (docs/compaction.md). */
export const SUMMARY_PREFIX = '[keel] Summary of the earlier conversation: ';

/**
 * A compaction applied to a thread's messages: everything up to the last message of
 * `through_run_id` becomes one summary message (carrying that run id, so it counts as
 * the oldest turn for `context_window`). A thread that no longer holds that run (deleted
 * meanwhile) is left as it is. The run loop and both store backends use this one rule.
 */
export function foldMessages(
  messages: readonly ThreadMessage[],
  fold: ThreadFold,
): ThreadMessage[] {
  const end = messages.findLastIndex((message) => message.run_id === fold.through_run_id);
  const last = messages[end];
  if (!last) return [...messages];
  const summary: ThreadMessage = {
    role: 'user',
    content: `${SUMMARY_PREFIX}${fold.summary}`,
    run_id: fold.through_run_id,
    ts: last.ts,
    summary: true,
  };
  return [summary, ...messages.slice(end + 1)];
}

/** What a run adds to its thread besides its texts: its compactions and token counts. */
export interface TurnExtras {
  compactions?: ThreadFold[];
  message_tokens?: number[];
}

/** The turn's message with its token count, when the run counted it. */
function counted(message: ThreadMessage, tokens: number | undefined): ThreadMessage {
  return tokens === undefined ? message : { ...message, tokens };
}

/** The thread's messages once the succeeded `run` answered `replyText` at `now`. */
export function messagesAfterTurn(
  existing: ThreadRow | undefined,
  run: RunRow,
  replyText: string,
  contextWindow: number,
  now: number,
  steeredTexts: readonly string[] = [],
  turn: TurnExtras = {},
): ThreadMessage[] {
  const ts = iso(now);
  const tokens = turn.message_tokens ?? [];
  const steered = steeredTexts.map((content, i): ThreadMessage =>
    counted({ role: 'user', content, run_id: run.run_id, ts }, tokens[i + 1]),
  );
  let past = existing ? parseJson<ThreadMessage[]>(existing.messages) : [];
  for (const fold of turn.compactions ?? []) past = foldMessages(past, fold);
  const user: ThreadMessage = {
    role: 'user',
    content: userContent(parseJson<JsonObject>(run.input)),
    run_id: run.run_id,
    ts,
  };
  const reply: ThreadMessage = { role: 'assistant', content: replyText, run_id: run.run_id, ts };
  return lastTurns(
    [
      ...past,
      counted(user, tokens[0]),
      ...steered,
      counted(reply, tokens[steeredTexts.length + 1]),
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
