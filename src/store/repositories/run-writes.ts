// Writes to a run, for both backends, each fenced by (run_id, attempt) in the statement
// itself: heartbeat, progress (entries + events + usage), the one finalization
// transaction, cancel, and failing an agent's runs. On PostgreSQL the fenced UPDATE
// row-locks the run, so a stale attempt in another process waits for the current
// holder's transaction and then finds the fence moved. The fault points around these
// writes are the backend's (its facade hits them around the write).
//
// The fence is written out in each statement rather than spliced in as a fragment: a
// statement without fragments keeps its template's strings as its parts, so the
// dialect finds its text without joining a new string per call (these are on every
// turn's path).

import type { Run, RunEntry, RunError } from '../../types.ts';
import type { RunRow } from '../rows.ts';
import { toRun } from '../rows.ts';
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
import { sql } from '../sql/query.ts';
import type { Op, Writes } from '../sql/steps.ts';
import { cancelPendingApprovals } from './approvals.ts';
import { insertDeliveryForRun } from './deliveries.ts';
import { appendTurnToThread } from './threads.ts';
import { appendEntries, appendEvent, appendEvents } from './trace.ts';
import { recordUsage } from './usage.ts';

/** Extends the lease of the fenced attempt; false when it no longer holds the run. */
export function* heartbeat(
  tx: Writes,
  fence: Fence,
  leaseMs: number,
  elapsedMs?: number,
): Op<boolean> {
  const changed = yield* tx.run(
    sql`UPDATE runs SET lease_expires_at = ${tx.now + leaseMs},
          elapsed_ms = COALESCE(${elapsedMs ?? null}, elapsed_ms)
        WHERE run_id = ${fence.run_id} AND status = 'running' AND attempt = ${fence.attempt}`,
  );
  return changed === 1;
}

/**
 * Every running run's lease expires now. Only the SQLite store offers it (at start-up,
 * its process owns the data dir, so every lease belongs to a process that is gone);
 * on a shared PostgreSQL database other processes' leases are live.
 */
export function* expireAllLeases(tx: Writes): Op<number> {
  return yield* tx.run(sql`UPDATE runs SET lease_expires_at = ${tx.now} WHERE status = 'running'`);
}

/** One progress write of the fenced attempt: its counters, usage, entries and events. */
export function* appendProgress(tx: Writes, fence: Fence, progress: ProgressInput): Op<RunEntry[]> {
  const values = progressValues(progress);
  const run = yield* tx.one<{ tenant: string; run_id: string; agent: string; scope: string }>(
    sql`UPDATE runs SET steps = COALESCE(${values.steps}, steps),
          usage = COALESCE(${values.usage}, usage),
          elapsed_ms = COALESCE(${values.elapsed_ms}, elapsed_ms)
        WHERE run_id = ${fence.run_id} AND status = 'running' AND attempt = ${fence.attempt}
        RETURNING tenant, run_id, agent, scope`,
  );
  if (!run) throw leaseLost(fence);
  yield* recordUsage(tx, run, progress);
  const entries = yield* appendEntries(tx, fence.run_id, fence.attempt, progress.entries ?? []);
  yield* appendEvents(tx, run, progress.events ?? []);
  return entries;
}

function* settleRun(tx: Writes, fence: Fence, input: FinalizeInput): Op<RunRow> {
  const values = settleValues(input, tx.now);
  const row = yield* tx.one<RunRow>(
    sql`UPDATE runs SET status = ${values.status}, output = ${values.output},
          error = ${values.error}, steps = ${values.steps}, usage = ${values.usage},
          elapsed_ms = ${values.elapsed_ms}, finished_at = ${values.finished_at},
          lease_owner = NULL, lease_expires_at = NULL
        WHERE run_id = ${fence.run_id} AND status = 'running' AND attempt = ${fence.attempt}
        RETURNING *`,
  );
  if (!row) throw leaseLost(fence);
  return row;
}

/** What a succeeded run leaves behind: the thread turn and, when asked, a delivery. */
function* recordSuccess(tx: Writes, row: RunRow, input: FinalizeInput): Op<void> {
  if (input.status !== 'succeeded') return;
  yield* appendTurnToThread(tx, row, input.reply_text, input.context_window, input.steered_texts, {
    ...(input.compactions && { compactions: input.compactions }),
    ...(input.message_tokens && { message_tokens: input.message_tokens }),
  });
  if (row.delivery_destination !== null)
    yield* insertDeliveryForRun(tx, row, row.delivery_destination);
}

/**
 * The one finalization transaction: the run's status and result, its terminal event,
 * and, when it succeeded, its thread turn and delivery.
 */
export function* finalizeRun(tx: Writes, fence: Fence, input: FinalizeInput): Op<Run> {
  const settled = yield* settleRun(tx, fence, input);
  yield* appendEvent(tx, settled, `run.${input.status}`, terminalEventData(input));
  yield* recordSuccess(tx, settled, input);
  tx.changes.push(terminalChange(settled.tenant, fence.run_id, input.status));
  return toRun(settled);
}

/** What cancelRun found: null when the tenant has no such run. */
export interface CancelOutcome {
  /** The run after the write (as it was, when it had already ended). */
  readonly run: Run;
  /** Whether this write cancelled it. */
  readonly cancelled: boolean;
}

/** Cancels the tenant's run unless it already ended; the run row is locked first. */
export function* cancelRun(
  tx: Writes,
  tenant: string,
  runId: string,
  reason: string | null,
): Op<CancelOutcome | null> {
  const current = yield* tx.one<RunRow>(
    sql`SELECT * FROM runs WHERE run_id = ${runId} AND tenant = ${tenant}${tx.dialect.locksRow}`,
  );
  if (!current) return null;
  const row = yield* cancelIn(tx, current, reason);
  return { run: toRun(row ?? current), cancelled: row !== undefined };
}

/** queued/running/waiting → cancelled inside the caller's transaction; undefined when it ended. */
export function* cancelIn(
  tx: Writes,
  current: { tenant: string; run_id: string; status: string },
  reason: string | null,
): Op<RunRow | undefined> {
  const row = yield* tx.one<RunRow>(
    sql`UPDATE runs SET status = 'cancelled', error = ${JSON.stringify(cancelError(reason))},
          finished_at = ${tx.now}, lease_owner = NULL, lease_expires_at = NULL
        WHERE run_id = ${current.run_id} AND status IN ('queued', 'running', 'waiting')
        RETURNING *`,
  );
  if (!row) return undefined;
  if (current.status === 'waiting') yield* cancelPendingApprovals(tx, [current.run_id]);
  yield* appendEvent(tx, row, 'run.cancelled', { reason });
  tx.changes.push(terminalChange(current.tenant, current.run_id, 'cancelled'));
  return row;
}

/** Fails every queued, running or waiting run of an agent inside the caller's transaction. */
export function* failActiveRuns(
  tx: Writes,
  lane: { tenant: string; agent: string },
  error: RunError,
): Op<void> {
  const rows = yield* tx.rows<{ tenant: string; run_id: string }>(
    sql`UPDATE runs SET status = 'failed', error = ${JSON.stringify(error)},
          finished_at = ${tx.now}, lease_owner = NULL, lease_expires_at = NULL
        WHERE tenant = ${lane.tenant} AND agent = ${lane.agent}
          AND status IN ('queued', 'running', 'waiting')
        RETURNING tenant, run_id`,
  );
  yield* cancelPendingApprovals(
    tx,
    rows.map((row) => row.run_id),
  );
  for (const row of inTerminalOrder(rows)) {
    yield* appendEvent(tx, row, 'run.failed', { error: { ...error } });
    tx.changes.push(terminalChange(row.tenant, row.run_id, 'failed'));
  }
}
