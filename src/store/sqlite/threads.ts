// Thread context per (tenant, agent, scope): the user and assistant text of the last
// `context_window` succeeded turns, written only by the finalization transaction.

import type { Thread, ThreadSummary } from '../../types.ts';
import type { Page } from '../store.ts';
import type { StoreContext } from './context.ts';
import type { RunRow } from './rows.ts';
import { decodeCursor, pageOf } from './rows.ts';
import type { ThreadRow, TurnExtras } from '../rules/threads.ts';
import { messagesAfterTurn, threadKey, toThread, toThreadSummary } from '../rules/threads.ts';

function threadRow(
  ctx: StoreContext,
  tenant: string,
  agent: string,
  scope: string,
): ThreadRow | undefined {
  return ctx
    .sql('SELECT * FROM threads WHERE tenant = ? AND agent = ? AND scope = ?')
    .get(tenant, agent, scope) as ThreadRow | undefined;
}

export function appendTurnToThread(
  ctx: StoreContext,
  run: RunRow,
  replyText: string,
  contextWindow: number,
  now: number,
  steeredTexts: readonly string[] = [],
  turn: TurnExtras = {},
): void {
  const existing = threadRow(ctx, run.tenant, run.agent, run.scope);
  const messages = messagesAfterTurn(
    existing,
    run,
    replyText,
    contextWindow,
    now,
    steeredTexts,
    turn,
  );
  ctx
    .sql(
      `INSERT INTO threads (tenant, agent, scope, revision, turns, messages, updated_at)
       VALUES (?, ?, ?, 1, 1, ?, ?)
       ON CONFLICT (tenant, agent, scope) DO UPDATE SET revision = revision + 1,
         turns = turns + 1, messages = excluded.messages, updated_at = excluded.updated_at`,
    )
    .run(run.tenant, run.agent, run.scope, JSON.stringify(messages), now);
}

export function getThread(
  ctx: StoreContext,
  tenant: string,
  agent: string,
  scope: string,
): Thread | null {
  const row = threadRow(ctx, tenant, agent, scope);
  return row ? toThread(row) : null;
}

export function listThreads(
  ctx: StoreContext,
  tenant: string,
  agent: string,
  limit: number,
  cursor?: string,
): Page<ThreadSummary> {
  let rows: ThreadRow[];
  if (cursor === undefined) {
    rows = ctx
      .sql(
        'SELECT * FROM threads WHERE tenant = ? AND agent = ? ORDER BY updated_at DESC, scope DESC LIMIT CAST(? AS INTEGER)',
      )
      .all(tenant, agent, limit + 1) as ThreadRow[];
  } else {
    const [updatedAt, scope] = decodeCursor(cursor, ['number', 'string']);
    rows = ctx
      .sql(
        `SELECT * FROM threads WHERE tenant = ? AND agent = ? AND (updated_at, scope) < (?, ?)
         ORDER BY updated_at DESC, scope DESC LIMIT CAST(? AS INTEGER)`,
      )
      .all(tenant, agent, updatedAt, scope, limit + 1) as ThreadRow[];
  }
  return pageOf(rows, limit, toThreadSummary, threadKey);
}

export function deleteThread(
  ctx: StoreContext,
  tenant: string,
  agent: string,
  scope: string,
): boolean {
  return ctx.write(
    () =>
      ctx
        .sql('DELETE FROM threads WHERE tenant = ? AND agent = ? AND scope = ?')
        .run(tenant, agent, scope).changes > 0,
  );
}
