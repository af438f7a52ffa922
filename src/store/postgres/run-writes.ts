// Writes to a running run, each fenced by (run_id, attempt) in the statement itself:
// heartbeat, progress (entries + events), the one finalization transaction, cancel.
// The fenced UPDATE row-locks the run, so a stale attempt in another process waits for
// the current holder's transaction and then finds the fence moved.

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
import type { Fence, FinalizeInput, ProgressInput } from '../store.ts';
import type { PgContext, Tx } from './context.ts';
import { insertDeliveryForRun } from './deliveries.ts';
import type { RunRow } from './rows.ts';
import { toRun } from './rows.ts';
import { appendTurnToThread } from './threads.ts';
import { appendEntries, appendEvent, appendEvents } from './trace.ts';
import { cancelPendingApprovals } from './approvals.ts';
import { recordUsage } from './usage.ts';

/** The fence as SQL on parameters $1 (run_id) and $2 (attempt). */
const FENCE = "run_id = $1 AND status = 'running' AND attempt = $2";

export async function heartbeat(
  ctx: PgContext,
  fence: Fence,
  leaseMs: number,
  elapsedMs?: number,
): Promise<boolean> {
  return ctx.write(
    async (tx) =>
      (await tx.count(
        `UPDATE runs SET lease_expires_at = $3, elapsed_ms = COALESCE($4, elapsed_ms)
         WHERE ${FENCE}`,
        [fence.run_id, fence.attempt, tx.now + leaseMs, elapsedMs ?? null],
      )) === 1,
  );
}

export async function appendProgress(
  ctx: PgContext,
  fence: Fence,
  progress: ProgressInput,
): Promise<RunEntry[]> {
  const stored = await ctx.write(async (tx) => {
    const row = await tx.one<{ tenant: string; run_id: string; agent: string; scope: string }>(
      `UPDATE runs SET steps = COALESCE($3, steps), usage = COALESCE($4, usage),
         elapsed_ms = COALESCE($5, elapsed_ms)
       WHERE ${FENCE} RETURNING tenant, run_id, agent, scope`,
      [fence.run_id, fence.attempt, ...progressValues(progress)],
    );
    if (!row) throw leaseLost(fence);
    await recordUsage(tx, row, progress);
    const entries = await appendEntries(tx, fence.run_id, fence.attempt, progress.entries ?? []);
    await appendEvents(tx, row, progress.events ?? []);
    return entries;
  });
  ctx.failpoints.hit('entry.after_commit');
  return stored;
}

async function settleRun(tx: Tx, fence: Fence, input: FinalizeInput): Promise<RunRow> {
  const row = await tx.one<RunRow>(
    `UPDATE runs SET status = $3, output = $4, error = $5, steps = $6, usage = $7,
       elapsed_ms = $8, finished_at = $9, lease_owner = NULL, lease_expires_at = NULL
     WHERE ${FENCE} RETURNING *`,
    [fence.run_id, fence.attempt, ...settleValues(input, tx.now)],
  );
  if (!row) throw leaseLost(fence);
  return row;
}

/** What a succeeded run leaves behind: the thread turn and, when asked, a delivery. */
async function recordSuccess(tx: Tx, row: RunRow, input: FinalizeInput): Promise<void> {
  if (input.status !== 'succeeded') return;
  await appendTurnToThread(tx, row, input.reply_text, input.context_window, input.steered_texts, {
    ...(input.compactions && { compactions: input.compactions }),
    ...(input.message_tokens && { message_tokens: input.message_tokens }),
  });
  if (row.delivery_destination !== null)
    await insertDeliveryForRun(tx, row, row.delivery_destination);
}

export async function finalizeRun(
  ctx: PgContext,
  fence: Fence,
  input: FinalizeInput,
): Promise<Run> {
  const row = await ctx.write(async (tx) => {
    const settled = await settleRun(tx, fence, input);
    await appendEvent(tx, settled, `run.${input.status}`, terminalEventData(input));
    await recordSuccess(tx, settled, input);
    tx.changes.push(terminalChange(settled.tenant, fence.run_id, input.status));
    ctx.failpoints.hit('finalize.before_commit');
    return settled;
  });
  ctx.failpoints.hit('finalize.after_commit');
  return toRun(row);
}

export async function cancelRun(
  ctx: PgContext,
  tenant: string,
  runId: string,
  reason: string | null,
): Promise<Run | null> {
  return ctx.write(async (tx) => {
    const current = await tx.one<RunRow>(
      'SELECT * FROM runs WHERE run_id = $1 AND tenant = $2 FOR UPDATE',
      [runId, tenant],
    );
    if (!current) return null;
    const row = await cancelIn(tx, current, reason);
    if (!row) return toRun(current);
    ctx.failpoints.hit('cancel.before_commit');
    return toRun(row);
  });
}

/** queued/running → cancelled inside the caller's transaction; undefined when it ended. */
export async function cancelIn(
  tx: Tx,
  current: { tenant: string; run_id: string; status: string },
  reason: string | null,
): Promise<RunRow | undefined> {
  const error = cancelError(reason);
  const row = await tx.one<RunRow>(
    `UPDATE runs SET status = 'cancelled', error = $1, finished_at = $2, lease_owner = NULL,
       lease_expires_at = NULL
     WHERE run_id = $3 AND status IN ('queued', 'running', 'waiting') RETURNING *`,
    [JSON.stringify(error), tx.now, current.run_id],
  );
  if (!row) return undefined;
  if (current.status === 'waiting') await cancelPendingApprovals(tx, [current.run_id]);
  await appendEvent(tx, row, 'run.cancelled', { reason });
  tx.changes.push(terminalChange(current.tenant, current.run_id, 'cancelled'));
  return row;
}

/** Fails every queued or running run of an agent inside the caller's transaction. */
export async function failActiveRuns(
  tx: Tx,
  lane: { tenant: string; agent: string },
  error: RunError,
): Promise<void> {
  const rows = await tx.rows<{ tenant: string; run_id: string }>(
    `UPDATE runs SET status = 'failed', error = $1, finished_at = $2, lease_owner = NULL,
       lease_expires_at = NULL
     WHERE tenant = $3 AND agent = $4 AND status IN ('queued', 'running', 'waiting')
     RETURNING tenant, run_id`,
    [JSON.stringify(error), tx.now, lane.tenant, lane.agent],
  );
  await cancelPendingApprovals(
    tx,
    rows.map((row) => row.run_id),
  );
  for (const row of inTerminalOrder(rows)) {
    await appendEvent(tx, row, 'run.failed', { error: { ...error } });
    tx.changes.push(terminalChange(row.tenant, row.run_id, 'failed'));
  }
}
