// One page of a thread's messages. A thread keeps up to context_window turns of
// user and assistant text (each up to a turn body), so a GET of the whole thread could
// be hundreds of megabytes of JSON: the route answers with the thread's fields and as many
// messages, oldest first, as fit the page size and the list byte budget (page-budget.ts),
// and a `next_cursor` for the rest. Each turn rewrites the thread (a rolling window), so
// the cursor names the revision it was issued for; a cursor of an older revision is 409
// CONFLICT rather than a page that silently skips or repeats messages.

import { KeelError } from '../errors.ts';
import type { Thread, ThreadMessage } from '../types.ts';

interface ThreadCursor {
  revision: number;
  /** Index of the first message of the next page. */
  from: number;
}

export function encodeThreadCursor(cursor: ThreadCursor): string {
  return Buffer.from(JSON.stringify([cursor.revision, cursor.from]), 'utf8').toString('base64url');
}

/** The message index a cursor starts at, checked against the thread's current revision. */
export function threadCursorStart(text: string | undefined, thread: Thread): number {
  if (text === undefined) return 0;
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    !parsed.every((part) => Number.isSafeInteger(part) && (part as number) >= 0)
  ) {
    throw new KeelError('VALIDATION_FAILED', 'cursor is not valid', { field: 'cursor' });
  }
  const [revision, from] = parsed as [number, number];
  if (revision !== thread.revision) {
    throw new KeelError(
      'CONFLICT',
      `the thread changed since this cursor (revision ${revision}, now ${thread.revision}); start again without a cursor`,
      { field: 'cursor' },
    );
  }
  return Math.min(from, thread.messages.length);
}

/** `limit` messages from `from` on, with the cursor of the message after them. */
export function threadMessagePage(
  thread: Thread,
  from: number,
  limit: number,
): { items: ThreadMessage[]; next_cursor: string | null } {
  const end = Math.min(from + limit, thread.messages.length);
  return {
    items: thread.messages.slice(from, end),
    next_cursor:
      end < thread.messages.length
        ? encodeThreadCursor({ revision: thread.revision, from: end })
        : null,
  };
}
