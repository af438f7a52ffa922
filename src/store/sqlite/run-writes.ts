// Writes to a running run, each fenced by (run_id, attempt) in the statement itself:
// heartbeat, progress (entries + events), the one finalization transaction, cancel.

import type { Run, RunEntry, RunError } from '../../types.ts';
import {
  cancelError,
  inTerminalOrder,
  leaseLost,
  progressValues,
  settleValues,
  terminalChange,
  terminalEventData,
} from '../rules/run-writes.ts';
import type { Fence, FinalizeInput, ProgressInput, StoreChange } from '../store.ts';
import type { StoreContext } from './context.ts';
import { insertDeliveryForRun } from './deliveries.ts';
import type { RunRow } from './rows.ts';
import { toRun } from './rows.ts';
import { appendTurnToThread } from './threads.ts';
import { appendEntries, appendEvent, appendEvents } from './trace.ts';
import { cancelPendingApprovals } from './approvals.ts';
import { recordUsage } from './usage.ts';

/** The fence as SQL: the attempt must still be the current one of a running run. */
const FENCE = "run_id = ? AND status = 'running' AND attempt = ?";

export function heartbeat(
  ctx: StoreContext,
  fence: Fence,
  leaseMs: number,
  elapsedMs?: number,
): boolean {
  return ctx.write(
    () =>
      ctx
        .sql(
          `UPDATE runs SET lease_expires_at = ?, elapsed_ms = COALESCE(?, elapsed_ms)
           WHERE ${FENCE}`,
        )
        .run(ctx.now() + leaseMs, elapsedMs ?? null, fence.run_id, fence.attempt).changes === 1,
  );
}

export function expireAllLeases(ctx: StoreContext): number {
  return ctx.write(
    () =>
      ctx.sql("UPDATE runs SET lease_expires_at = ? WHERE status = 'running'").run(ctx.now())
        .changes,
  );
}

export function appendProgress(
  ctx: StoreContext,
  fence: Fence,
  progress: ProgressInput,
): RunEntry[] {
  const stored = ctx.write((changes) => {
    const now = ctx.now();
    const row = ctx
      .sql(
        `UPDATE runs SET steps = COALESCE(?, steps), usage = COALESCE(?, usage),
           elapsed_ms = COALESCE(?, elapsed_ms)
         WHERE ${FENCE} RETURNING tenant, run_id, agent, scope`,
      )
      // An array binds its items as consecutive parameters: no spread call per write.
      .get(progressValues(progress), fence.run_id, fence.attempt) as
      { tenant: string; run_id: string; agent: string; scope: string } | undefined;
    if (!row) throw leaseLost(fence);
    recordUsage(ctx, changes, row, progress, now);
    const entries = progress.entries?.length
      ? appendEntries(ctx, fence.run_id, fence.attempt, progress.entries, now)
      : [];
    appendEvents(ctx, changes, row, progress.events ?? [], now);
    return entries;
  });
  ctx.afterCommit(() => ctx.failpoints.hit('entry.after_commit'));
  return stored;
}

function settleRun(ctx: StoreContext, fence: Fence, input: FinalizeInput, now: number): RunRow {
  const row = ctx
    .sql(
      `UPDATE runs SET status = ?, output = ?, error = ?, steps = ?, usage = ?, elapsed_ms = ?,
         finished_at = ?, lease_owner = NULL, lease_expires_at = NULL
       WHERE ${FENCE} RETURNING *`,
    )
    .get(settleValues(input, now), fence.run_id, fence.attempt) as RunRow | undefined;
  if (!row) throw leaseLost(fence);
  return row;
}

/** What a succeeded run leaves behind: the thread turn and, when asked, a delivery. */
function recordSuccess(
  ctx: StoreContext,
  changes: StoreChange[],
  row: RunRow,
  input: FinalizeInput,
  now: number,
): void {
  if (input.status !== 'succeeded') return;
  appendTurnToThread(
    ctx,
    changes,
    row,
    input.reply_text,
    input.context_window,
    now,
    input.steered_texts,
    {
      ...(input.compactions && { compactions: input.compactions }),
      ...(input.message_tokens && { message_tokens: input.message_tokens }),
    },
  );
  if (row.delivery_destination !== null)
    insertDeliveryForRun(ctx, changes, row, row.delivery_destination, now);
}

export function finalizeRun(ctx: StoreContext, fence: Fence, input: FinalizeInput): Run {
  const row = ctx.write((changes) => {
    const now = ctx.now();
    const settled = settleRun(ctx, fence, input, now);
    appendEvent(ctx, changes, settled, `run.${input.status}`, terminalEventData(input), now);
    recordSuccess(ctx, changes, settled, input, now);
    changes.push(terminalChange(settled.tenant, fence.run_id, input.status));
    ctx.failpoints.hit('finalize.before_commit');
    return settled;
  });
  ctx.afterCommit(() => ctx.failpoints.hit('finalize.after_commit'));
  return toRun(row);
}

export function cancelRun(
  ctx: StoreContext,
  tenant: string,
  runId: string,
  reason: string | null,
): Run | null {
  return ctx.write((changes) => {
    const current = ctx
      .sql('SELECT * FROM runs WHERE run_id = ? AND tenant = ?')
      .get(runId, tenant) as RunRow | undefined;
    if (!current) return null;
    const row = cancelIn(ctx, changes, current, reason);
    if (!row) return toRun(current);
    ctx.failpoints.hit('cancel.before_commit');
    return toRun(row);
  });
}

/** queued/running → cancelled inside the caller's transaction; undefined when it ended. */
export function cancelIn(
  ctx: StoreContext,
  changes: StoreChange[],
  current: { tenant: string; run_id: string; status: string },
  reason: string | null,
): RunRow | undefined {
  const now = ctx.now();
  const error = cancelError(reason);
  const row = ctx
    .sql(
      `UPDATE runs SET status = 'cancelled', error = ?, finished_at = ?, lease_owner = NULL,
         lease_expires_at = NULL
       WHERE run_id = ? AND status IN ('queued', 'running', 'waiting') RETURNING *`,
    )
    .get(JSON.stringify(error), now, current.run_id) as RunRow | undefined;
  if (!row) return undefined;
  if (current.status === 'waiting') cancelPendingApprovals(ctx, [current.run_id]);
  appendEvent(ctx, changes, row, 'run.cancelled', { reason }, now);
  changes.push(terminalChange(current.tenant, current.run_id, 'cancelled'));
  return row;
}

/** Fails every queued or running run of an agent inside the caller's transaction. */
export function failActiveRuns(
  ctx: StoreContext,
  changes: StoreChange[],
  lane: { tenant: string; agent: string },
  error: RunError,
): void {
  const now = ctx.now();
  const rows = ctx
    .sql(
      `UPDATE runs SET status = 'failed', error = ?, finished_at = ?, lease_owner = NULL,
         lease_expires_at = NULL
       WHERE tenant = ? AND agent = ? AND status IN ('queued', 'running', 'waiting')
       RETURNING tenant, run_id`,
    )
    .all(JSON.stringify(error), now, lane.tenant, lane.agent) as {
    tenant: string;
    run_id: string;
  }[];
  cancelPendingApprovals(
    ctx,
    rows.map((row) => row.run_id),
  );
  for (const row of inTerminalOrder(rows)) {
    appendEvent(ctx, changes, row, 'run.failed', { error: { ...error } }, now);
    changes.push(terminalChange(row.tenant, row.run_id, 'failed'));
  }
}
