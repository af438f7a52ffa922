// Memory in the loop (docs/memory.md, "Recall"): an agent with `recall = { namespace, k }`
// gets the top k facts for the user's message put into the model's context at the start
// of each turn, as a `note` entry before the user entry, with a `memory.recall` event
// naming the facts. Both are written in the checkpoint that records the user entry, so
// a resumed run sends exactly the facts the first attempt chose and never searches
// again. A search that fails with a keel error (no memory service, a stale index) is
// recorded in the event and the turn goes on without facts: recall helps, it is not a
// precondition. Any other error (the store is down) propagates like every store error.

import { isKeelError } from '../errors.ts';
import { MAX_QUERY_BYTES } from '../memory/service.ts';
import { utf8Length } from '../memory/text.ts';
import type { MemoryPort } from '../tools/builtin/memory-port.ts';
import type { AgentRecall, EntryBody } from '../types.ts';
import type { RunEvent } from '../events.ts';

export type RecallEvent = Extract<RunEvent, { type: 'memory.recall' }>;

/** The note the model reads; facts are quoted as data, one a line. */
export function recallNoteText(namespace: string, facts: readonly { text: string }[]): string {
  const lines = facts.map((fact) => `- ${JSON.stringify(fact.text)}`);
  return [
    `Facts recalled from memory (namespace "${namespace}") for the next message; use them if they are relevant:`,
    ...lines,
  ].join('\n');
}

/** A long message is searched by its first MAX_QUERY_BYTES bytes, whole characters only. */
function searchText(text: string): string {
  if (utf8Length(text) <= MAX_QUERY_BYTES) return text;
  let out = '';
  let bytes = 0;
  for (const char of text) {
    bytes += utf8Length(char);
    if (bytes > MAX_QUERY_BYTES) break;
    out += char;
  }
  return out;
}

export async function recallForTurn(
  recall: AgentRecall,
  userText: string,
  memory: MemoryPort | undefined,
): Promise<{ entries: EntryBody[]; event: RecallEvent }> {
  const { namespace, k } = recall;
  const failed = (code: string, message: string) => ({
    entries: [],
    event: {
      type: 'memory.recall' as const,
      data: { namespace, k, facts: [], error: { code, message } },
    },
  });
  if (!memory) return failed('MEMORY_UNAVAILABLE', 'this process has no memory service');
  if (userText.trim().length === 0) return failed('VALIDATION_FAILED', 'the message has no text');
  let hits;
  try {
    hits = await memory.search(namespace, searchText(userText), k);
  } catch (error) {
    if (!isKeelError(error)) throw error;
    return failed(error.code, error.message);
  }
  const facts = hits.map((hit) => ({
    id: hit.id,
    text: hit.text,
    score: hit.score,
    lexical_rank: hit.lexical_rank,
    semantic_rank: hit.semantic_rank,
  }));
  return {
    entries:
      facts.length > 0 ? [{ kind: 'note', body: { text: recallNoteText(namespace, facts) } }] : [],
    event: { type: 'memory.recall', data: { namespace, k, facts } },
  };
}
