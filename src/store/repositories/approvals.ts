// Approvals (docs/approvals.md), for both backends: the waiting transaction (fenced), the
// decision, the listings, the timeout sweep, and what other writes do to a run's pending
// approvals. The rules are ../rules/approvals.ts. A decision locks the run row, then the
// approval row (the order cancel and the claim take them in too), so two deciders — or a
// decider and another process's sweep — take turns and the second finds it settled.

import { KeelError } from '../../errors.ts';
import type { ApprovalRow } from '../rules/approvals.ts';
import {
  approvalAlreadyDecided,
  approvalNotFound,
  approvalValues,
  decidedEventData,
  decisionStatus,
  INPUT_TEXT_MAX,
  requestedEvents,
  resumableChange,
  TIMEOUT_NOTE,
  toApproval,
  toPendingApproval,
} from '../rules/approvals.ts';
import { leaseLost } from '../rules/run-writes.ts';
import type {
  Approval,
  ApprovalDecision,
  ApprovalRequest,
  ApprovalStatus,
  Fence,
  PendingApproval,
} from '../store.ts';
import { join, limitOf, raw, sql } from '../sql/query.ts';
import type { Op, Reads, Writes } from '../sql/steps.ts';
import { insertApprovalDelivery } from './deliveries.ts';
import { appendEvent, appendEvents } from './trace.ts';

interface WaitingRun {
  tenant: string;
  agent: string;
  scope: string;
  run_id: string;
  delivery_destination: string | null;
}

/**
 * The waiting transaction: the fenced run goes running → waiting (lease given up), the
 * approval row, its events, and the approval delivery when the turn has a destination.
 */
export function* requestApproval(tx: Writes, fence: Fence, request: ApprovalRequest): Op<Approval> {
  const run = yield* tx.one<WaitingRun>(
    sql`UPDATE runs SET status = 'waiting', lease_owner = NULL, lease_expires_at = NULL
        WHERE run_id = ${fence.run_id} AND status = 'running' AND attempt = ${fence.attempt}
        RETURNING tenant, agent, scope, run_id, delivery_destination`,
  );
  if (!run) throw leaseLost(fence);
  const values = approvalValues(fence, run, request, tx.now);
  const row = (yield* tx.one<ApprovalRow>(
    sql`INSERT INTO approvals (run_id, call_id, tenant, agent, scope, step, tool, arguments,
          requested_at, expires_at, status)
        VALUES (${join(
          values.map((value) => sql`${value}`),
          ', ',
        )}, 'pending') RETURNING *`,
  )) as ApprovalRow;
  yield* appendEvents(tx, run, requestedEvents(fence, request, values[9] as number | null));
  const approval = toApproval(row);
  if (run.delivery_destination !== null) {
    yield* insertApprovalDelivery(tx, approval, run.delivery_destination);
  }
  return approval;
}

/** Settles a pending approval of a waiting run and makes the run claimable again. */
function* settle(
  tx: Writes,
  row: ApprovalRow,
  status: ApprovalStatus,
  note: string | null,
): Op<ApprovalRow> {
  const settled = yield* tx.one<ApprovalRow>(
    sql`UPDATE approvals SET status = ${status}, note = ${note}, decided_at = ${tx.now}
        WHERE run_id = ${row.run_id} AND call_id = ${row.call_id} AND status = 'pending'
        RETURNING *`,
  );
  // Back to queued with its old queue position: its lane's first run again.
  yield* tx.run(
    sql`UPDATE runs SET status = 'queued' WHERE run_id = ${row.run_id} AND status = 'waiting'`,
  );
  yield* appendEvent(tx, row, 'approval.decided', decidedEventData(row.call_id, status, note));
  tx.changes.push(resumableChange(row.tenant, row.run_id));
  return settled as ApprovalRow;
}

export function* decideApproval(
  tx: Writes,
  tenant: string,
  runId: string,
  callId: string,
  decision: ApprovalDecision,
): Op<Approval> {
  const run = yield* tx.one<{ status: string }>(
    sql`SELECT status FROM runs WHERE run_id = ${runId} AND tenant = ${tenant}${tx.dialect.locksRow}`,
  );
  if (!run) throw new KeelError('RUN_NOT_FOUND', `run ${runId} not found`);
  const row = yield* tx.one<ApprovalRow>(
    sql`SELECT * FROM approvals WHERE run_id = ${runId} AND call_id = ${callId}${tx.dialect.locksRow}`,
  );
  if (!row) throw approvalNotFound(runId, callId);
  if (row.status !== 'pending' || run.status !== 'waiting') {
    throw approvalAlreadyDecided(row, run.status);
  }
  return toApproval(yield* settle(tx, row, decisionStatus(decision.decision), decision.note));
}

export function* listPendingApprovals(
  db: Reads,
  tenant: string,
  limit: number,
): Op<PendingApproval[]> {
  // The run's input text (its `text`, else the input JSON), cut in SQL: see INPUT_TEXT_MAX.
  const input = raw('r.input');
  const rows = yield* db.rows<ApprovalRow & { input_head: string }>(
    sql`SELECT a.*,
          substr(COALESCE(${db.dialect.jsonText(input, 'text')}, r.input), 1, ${raw(String(INPUT_TEXT_MAX + 1))})
            AS input_head
        FROM approvals a${db.dialect.indexedBy('approvals_pending')} JOIN runs r ON r.run_id = a.run_id
        WHERE a.tenant = ${tenant} AND a.status = 'pending'
        ORDER BY a.requested_at, a.run_id, a.call_id LIMIT ${limitOf(limit)}`,
  );
  return rows.map(toPendingApproval);
}

/** The run's approvals, oldest first; null when the tenant has no such run. */
export function* listRunApprovals(db: Reads, tenant: string, runId: string): Op<Approval[] | null> {
  const run = yield* db.one(
    sql`SELECT 1 AS found FROM runs WHERE run_id = ${runId} AND tenant = ${tenant}`,
  );
  if (!run) return null;
  const rows = yield* db.rows<ApprovalRow>(
    sql`SELECT * FROM approvals WHERE run_id = ${runId} ORDER BY requested_at, call_id`,
  );
  return rows.map(toApproval);
}

/**
 * Whether any pending approval is past its time at `now` (the store clock's): read
 * outside a write first, so an idle sweep (every second, on every worker) takes no write
 * lock and opens no write transaction.
 */
export function* anyApprovalDue(db: Reads, now: number): Op<boolean> {
  const due = yield* db.one(
    sql`SELECT 1 AS found FROM approvals${db.dialect.indexedBy('approvals_due')}
        WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= ${now} LIMIT 1`,
  );
  return due !== undefined;
}

/**
 * Times out up to `limit` approvals past their time; how many. Rows another process's
 * sweep or decision holds are skipped (Dialect.skipsLocked), so sweeps share the rows.
 */
export function* expireApprovals(tx: Writes, limit: number): Op<number> {
  const due = yield* tx.rows<ApprovalRow>(
    sql`SELECT a.* FROM approvals a${tx.dialect.indexedBy('approvals_due')} JOIN runs r ON r.run_id = a.run_id
        WHERE a.status = 'pending' AND a.expires_at IS NOT NULL AND a.expires_at <= ${tx.now}
          AND r.status = 'waiting'
        ORDER BY a.expires_at LIMIT ${limitOf(limit)}${tx.dialect.skipsLocked(['r', 'a'])}`,
  );
  for (const row of due) yield* settle(tx, row, 'timed_out', TIMEOUT_NOTE);
  return due.length;
}

/** Inside the write that ends the runs (cancel, fail): their pending approvals with them. */
export function* cancelPendingApprovals(tx: Writes, runIds: readonly string[]): Op<void> {
  if (runIds.length === 0) return;
  yield* tx.run(
    sql`UPDATE approvals SET status = 'cancelled', decided_at = ${tx.now}
        WHERE ${tx.dialect.inList(sql`run_id`, runIds)} AND status = 'pending'`,
  );
}
