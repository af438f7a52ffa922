// Thread context per (tenant, agent, scope), for both backends: the user and assistant
// text of the last `context_window` succeeded turns, written only by the finalization
// transaction (which holds the lane, so two writers of one thread cannot interleave).

import type { Thread, ThreadSummary } from '../../types.ts';
import type { RunRow } from '../rows.ts';
import { decodeCursor, pageOf } from '../rows.ts';
import type { ThreadRow, TurnExtras } from '../rules/threads.ts';
import { messagesAfterTurn, threadKey, toThread, toThreadSummary } from '../rules/threads.ts';
import type { Page } from '../store.ts';
import { limitOf, sql } from '../sql/query.ts';
import type { Op, Reads, Writes } from '../sql/steps.ts';

/** Inside the finalization write: the run's reply (and steered texts) join its thread. */
export function* appendTurnToThread(
  tx: Writes,
  run: RunRow,
  replyText: string,
  contextWindow: number,
  steeredTexts: readonly string[] = [],
  turn: TurnExtras = {},
): Op<void> {
  const existing = yield* tx.one<ThreadRow>(
    sql`SELECT * FROM threads WHERE tenant = ${run.tenant} AND agent = ${run.agent}
          AND scope = ${run.scope}${tx.dialect.locksRow}`,
  );
  const messages = messagesAfterTurn(
    existing,
    run,
    replyText,
    contextWindow,
    tx.now,
    steeredTexts,
    turn,
  );
  yield* tx.run(
    sql`INSERT INTO threads (tenant, agent, scope, revision, turns, messages, updated_at)
        VALUES (${run.tenant}, ${run.agent}, ${run.scope}, 1, 1, ${JSON.stringify(messages)}, ${tx.now})
        ON CONFLICT (tenant, agent, scope) DO UPDATE SET revision = threads.revision + 1,
          turns = threads.turns + 1, messages = excluded.messages,
          updated_at = excluded.updated_at`,
  );
}

export function* getThread(
  db: Reads,
  tenant: string,
  agent: string,
  scope: string,
): Op<Thread | null> {
  const row = yield* db.one<ThreadRow>(
    sql`SELECT * FROM threads WHERE tenant = ${tenant} AND agent = ${agent} AND scope = ${scope}`,
  );
  return row ? toThread(row) : null;
}

/** An agent's threads, most recently updated first. */
export function* listThreads(
  db: Reads,
  tenant: string,
  agent: string,
  limit: number,
  cursor?: string,
): Op<Page<ThreadSummary>> {
  let after = sql``;
  if (cursor !== undefined) {
    const [updatedAt, scope] = decodeCursor(cursor, ['number', 'string']) as [number, string];
    after = sql` AND (updated_at, scope) < (${updatedAt}, ${scope})`;
  }
  const rows = yield* db.rows<ThreadRow>(
    sql`SELECT * FROM threads WHERE tenant = ${tenant} AND agent = ${agent}${after}
        ORDER BY updated_at DESC, scope DESC LIMIT ${limitOf(limit + 1)}`,
  );
  return pageOf(rows, limit, toThreadSummary, threadKey);
}

export function* deleteThread(
  tx: Writes,
  tenant: string,
  agent: string,
  scope: string,
): Op<boolean> {
  const deleted = yield* tx.run(
    sql`DELETE FROM threads WHERE tenant = ${tenant} AND agent = ${agent} AND scope = ${scope}`,
  );
  return deleted > 0;
}
