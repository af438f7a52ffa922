// Approvals (docs/approvals.md): the waiting transaction (fenced), the decision, the
// listings, and the timeout sweep. The rules are src/store/rules/approvals.ts.

import { KeelError } from '../../errors.ts';
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
import type { ApprovalRow } from '../rules/approvals.ts';
import { leaseLost } from '../rules/run-writes.ts';
import type {
  Approval,
  ApprovalDecision,
  ApprovalRequest,
  ApprovalStatus,
  Fence,
  PendingApproval,
  StoreChange,
} from '../store.ts';
import type { StoreContext } from './context.ts';
import * as shared from '../repositories/approvals.ts';
import { within } from './steps.ts';
import { insertApprovalDelivery } from './deliveries.ts';
import { appendEvent, appendEvents } from './trace.ts';

function approvalRow(ctx: StoreContext, runId: string, callId: string): ApprovalRow | undefined {
  return ctx.sql('SELECT * FROM approvals WHERE run_id = ? AND call_id = ?').get(runId, callId) as
    ApprovalRow | undefined;
}

export function requestApproval(
  ctx: StoreContext,
  fence: Fence,
  request: ApprovalRequest,
): Approval {
  const approval = ctx.write((changes) => {
    const now = ctx.now();
    const run = ctx
      .sql(
        `UPDATE runs SET status = 'waiting', lease_owner = NULL, lease_expires_at = NULL
         WHERE run_id = ? AND status = 'running' AND attempt = ? RETURNING tenant, agent, scope, run_id, delivery_destination`,
      )
      .get(fence.run_id, fence.attempt) as
      | {
          tenant: string;
          agent: string;
          scope: string;
          run_id: string;
          delivery_destination: string | null;
        }
      | undefined;
    if (!run) throw leaseLost(fence);
    const values = approvalValues(fence, run, request, now);
    ctx
      .sql(
        `INSERT INTO approvals (run_id, call_id, tenant, agent, scope, step, tool, arguments,
           requested_at, expires_at, status)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending')`,
      )
      .run(values);
    const expiresAt = values[9] as number | null;
    appendEvents(ctx, changes, run, requestedEvents(fence, request, expiresAt), now);
    const approval = toApproval(
      approvalRow(ctx, fence.run_id, request.call.call_id) as ApprovalRow,
    );
    if (run.delivery_destination !== null) {
      insertApprovalDelivery(ctx, changes, approval, run.delivery_destination, now);
    }
    ctx.failpoints.hit('approval.request.before_commit');
    return approval;
  });
  ctx.afterCommit(() => ctx.failpoints.hit('approval.request.after_commit'));
  return approval;
}

/** Settles a pending approval of a waiting run and makes the run claimable again. */
function settle(
  ctx: StoreContext,
  changes: StoreChange[],
  row: ApprovalRow,
  status: ApprovalStatus,
  note: string | null,
  now: number,
): ApprovalRow {
  const settled = ctx
    .sql(
      `UPDATE approvals SET status = ?, note = ?, decided_at = ?
       WHERE run_id = ? AND call_id = ? AND status = 'pending' RETURNING *`,
    )
    .get(status, note, now, row.run_id, row.call_id) as ApprovalRow;
  ctx
    .sql("UPDATE runs SET status = 'queued' WHERE run_id = ? AND status = 'waiting'")
    .run(row.run_id);
  appendEvent(
    ctx,
    changes,
    row,
    'approval.decided',
    decidedEventData(row.call_id, status, note),
    now,
  );
  changes.push(resumableChange(row.tenant, row.run_id));
  return settled;
}

export function decideApproval(
  ctx: StoreContext,
  tenant: string,
  runId: string,
  callId: string,
  decision: ApprovalDecision,
): Approval {
  const approval = ctx.write((changes) => {
    const run = ctx
      .sql('SELECT status FROM runs WHERE run_id = ? AND tenant = ?')
      .get(runId, tenant) as { status: string } | undefined;
    if (!run) throw new KeelError('RUN_NOT_FOUND', `run ${runId} not found`);
    const row = approvalRow(ctx, runId, callId);
    if (!row) throw approvalNotFound(runId, callId);
    if (row.status !== 'pending' || run.status !== 'waiting') {
      throw approvalAlreadyDecided(row, run.status);
    }
    const settled = settle(
      ctx,
      changes,
      row,
      decisionStatus(decision.decision),
      decision.note,
      ctx.now(),
    );
    ctx.failpoints.hit('approval.decide.before_commit');
    return toApproval(settled);
  });
  ctx.afterCommit(() => ctx.failpoints.hit('approval.decide.after_commit'));
  return approval;
}

/** The run's input text (its `text`, else the input JSON), cut in SQL: see INPUT_TEXT_MAX. */
const INPUT_HEAD = `substr(CASE WHEN json_type(r.input, '$.text') = 'text'
  THEN json_extract(r.input, '$.text') ELSE r.input END, 1, ${INPUT_TEXT_MAX + 1})`;

export function listPendingApprovals(
  ctx: StoreContext,
  tenant: string,
  limit: number,
): PendingApproval[] {
  const rows = ctx
    .sql(
      `SELECT a.*, ${INPUT_HEAD} AS input_head
       FROM approvals a INDEXED BY approvals_pending JOIN runs r ON r.run_id = a.run_id
       WHERE a.tenant = ? AND a.status = 'pending'
       ORDER BY a.requested_at, a.run_id, a.call_id LIMIT CAST(? AS INTEGER)`,
    )
    .all(tenant, limit) as (ApprovalRow & { input_head: string })[];
  return rows.map(toPendingApproval);
}

export function listRunApprovals(
  ctx: StoreContext,
  tenant: string,
  runId: string,
): Approval[] | null {
  const run = ctx.sql('SELECT 1 FROM runs WHERE run_id = ? AND tenant = ?').get(runId, tenant);
  if (!run) return null;
  const rows = ctx
    .sql('SELECT * FROM approvals WHERE run_id = ? ORDER BY requested_at, call_id')
    .all(runId) as ApprovalRow[];
  return rows.map(toApproval);
}

/** Read-only probe first: an idle sweep takes no write lock (it runs every second). */
const ANY_DUE = `SELECT 1 FROM approvals INDEXED BY approvals_due
  WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= ? LIMIT 1`;

export function expireApprovals(ctx: StoreContext, limit: number): number {
  if (!ctx.sql(ANY_DUE).get(ctx.now())) return 0;
  return ctx.write((changes) => {
    const now = ctx.now();
    const due = ctx
      .sql(
        `SELECT a.* FROM approvals a INDEXED BY approvals_due JOIN runs r ON r.run_id = a.run_id
         WHERE a.status = 'pending' AND a.expires_at IS NOT NULL AND a.expires_at <= ?
           AND r.status = 'waiting'
         ORDER BY a.expires_at LIMIT CAST(? AS INTEGER)`,
      )
      .all(now, limit) as ApprovalRow[];
    for (const row of due) settle(ctx, changes, row, 'timed_out', TIMEOUT_NOTE, now);
    return due.length;
  });
}

/** A waiting run that ends otherwise (cancel, agent deleted): its approvals close. */
export function cancelPendingApprovals(ctx: StoreContext, runIds: readonly string[]): void {
  within(ctx, (tx) => shared.cancelPendingApprovals(tx, runIds), { changes: [] });
}
