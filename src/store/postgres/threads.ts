// Thread context per (tenant, agent, scope): the user and assistant text of the last
// `context_window` succeeded turns, written only by the finalization transaction (which
// holds the lane, so two writers of one thread cannot interleave).

import type { Thread, ThreadSummary } from '../../types.ts';
import type { Page } from '../store.ts';
import type { PgContext, Sql, Tx } from './context.ts';
import type { RunRow } from './rows.ts';
import { decodeCursor, pageOf } from './rows.ts';
import type { ThreadRow, TurnExtras } from '../rules/threads.ts';
import { messagesAfterTurn, threadKey, toThread, toThreadSummary } from '../rules/threads.ts';

export async function appendTurnToThread(
  tx: Tx,
  run: RunRow,
  replyText: string,
  contextWindow: number,
  steeredTexts: readonly string[] = [],
  turn: TurnExtras = {},
): Promise<void> {
  const existing = await tx.one<ThreadRow>(
    'SELECT * FROM threads WHERE tenant = $1 AND agent = $2 AND scope = $3 FOR UPDATE',
    [run.tenant, run.agent, run.scope],
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
  await tx.count(
    `INSERT INTO threads (tenant, agent, scope, revision, turns, messages, updated_at)
     VALUES ($1, $2, $3, 1, 1, $4, $5)
     ON CONFLICT (tenant, agent, scope) DO UPDATE SET revision = threads.revision + 1,
       turns = threads.turns + 1, messages = excluded.messages, updated_at = excluded.updated_at`,
    [run.tenant, run.agent, run.scope, JSON.stringify(messages), tx.now],
  );
}

export async function getThread(
  sql: Sql,
  tenant: string,
  agent: string,
  scope: string,
): Promise<Thread | null> {
  const row = await sql.one<ThreadRow>(
    'SELECT * FROM threads WHERE tenant = $1 AND agent = $2 AND scope = $3',
    [tenant, agent, scope],
  );
  return row ? toThread(row) : null;
}

export async function listThreads(
  sql: Sql,
  tenant: string,
  agent: string,
  limit: number,
  cursor?: string,
): Promise<Page<ThreadSummary>> {
  let rows: ThreadRow[];
  if (cursor === undefined) {
    rows = await sql.rows<ThreadRow>(
      `SELECT * FROM threads WHERE tenant = $1 AND agent = $2
       ORDER BY updated_at DESC, scope DESC LIMIT $3`,
      [tenant, agent, limit + 1],
    );
  } else {
    const [updatedAt, scope] = decodeCursor(cursor, ['number', 'string']);
    rows = await sql.rows<ThreadRow>(
      `SELECT * FROM threads WHERE tenant = $1 AND agent = $2 AND (updated_at, scope) < ($3, $4)
       ORDER BY updated_at DESC, scope DESC LIMIT $5`,
      [tenant, agent, updatedAt as number, scope as string, limit + 1],
    );
  }
  return pageOf(rows, limit, toThreadSummary, threadKey);
}

export async function deleteThread(
  ctx: PgContext,
  tenant: string,
  agent: string,
  scope: string,
): Promise<boolean> {
  return ctx.write(
    async (tx) =>
      (await tx.count('DELETE FROM threads WHERE tenant = $1 AND agent = $2 AND scope = $3', [
        tenant,
        agent,
        scope,
      ])) > 0,
  );
}
