// Approvals (docs/approvals.md): the waiting transaction (fenced), the decision, the
// listings, and the timeout sweep. The rules are src/store/rules/approvals.ts. Decisions
// and the sweep lock the approval row, so two deciders (or a decider and the sweep of
// another process) serialize and the second finds it settled.

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
} from '../store.ts';
import type { PgContext, Sql, Tx } from './context.ts';
import * as shared from '../repositories/approvals.ts';
import { within } from './steps.ts';
import { insertApprovalDelivery } from './deliveries.ts';
import { appendEvent, appendEvents } from './trace.ts';

export async function requestApproval(
  ctx: PgContext,
  fence: Fence,
  request: ApprovalRequest,
): Promise<Approval> {
  const approval = await ctx.write(async (tx) => {
    const run = await tx.one<{
      tenant: string;
      agent: string;
      scope: string;
      run_id: string;
      delivery_destination: string | null;
    }>(
      `UPDATE runs SET status = 'waiting', lease_owner = NULL, lease_expires_at = NULL
       WHERE run_id = $1 AND status = 'running' AND attempt = $2
       RETURNING tenant, agent, scope, run_id, delivery_destination`,
      [fence.run_id, fence.attempt],
    );
    if (!run) throw leaseLost(fence);
    const values = approvalValues(fence, run, request, tx.now);
    const row = await tx.one<ApprovalRow>(
      `INSERT INTO approvals (run_id, call_id, tenant, agent, scope, step, tool, arguments,
         requested_at, expires_at, status)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'pending') RETURNING *`,
      values,
    );
    await appendEvents(tx, run, requestedEvents(fence, request, values[9] as number | null));
    const approval = toApproval(row as ApprovalRow);
    if (run.delivery_destination !== null) {
      await insertApprovalDelivery(tx, approval, run.delivery_destination);
    }
    ctx.failpoints.hit('approval.request.before_commit');
    return approval;
  });
  ctx.failpoints.hit('approval.request.after_commit');
  return approval;
}

async function settle(
  tx: Tx,
  row: ApprovalRow,
  status: ApprovalStatus,
  note: string | null,
): Promise<ApprovalRow> {
  const settled = await tx.one<ApprovalRow>(
    `UPDATE approvals SET status = $1, note = $2, decided_at = $3
     WHERE run_id = $4 AND call_id = $5 AND status = 'pending' RETURNING *`,
    [status, note, tx.now, row.run_id, row.call_id],
  );
  await tx.count("UPDATE runs SET status = 'queued' WHERE run_id = $1 AND status = 'waiting'", [
    row.run_id,
  ]);
  await appendEvent(tx, row, 'approval.decided', decidedEventData(row.call_id, status, note));
  tx.changes.push(resumableChange(row.tenant, row.run_id));
  return settled as ApprovalRow;
}

export async function decideApproval(
  ctx: PgContext,
  tenant: string,
  runId: string,
  callId: string,
  decision: ApprovalDecision,
): Promise<Approval> {
  const approval = await ctx.write(async (tx) => {
    // The run row first, locked: the order cancel and the claim take it in too.
    const run = await tx.one<{ status: string }>(
      'SELECT status FROM runs WHERE run_id = $1 AND tenant = $2 FOR UPDATE',
      [runId, tenant],
    );
    if (!run) throw new KeelError('RUN_NOT_FOUND', `run ${runId} not found`);
    const row = await tx.one<ApprovalRow>(
      'SELECT * FROM approvals WHERE run_id = $1 AND call_id = $2 FOR UPDATE',
      [runId, callId],
    );
    if (!row) throw approvalNotFound(runId, callId);
    if (row.status !== 'pending' || run.status !== 'waiting') {
      throw approvalAlreadyDecided(row, run.status);
    }
    const settled = await settle(tx, row, decisionStatus(decision.decision), decision.note);
    ctx.failpoints.hit('approval.decide.before_commit');
    return toApproval(settled);
  });
  ctx.failpoints.hit('approval.decide.after_commit');
  return approval;
}

/** The run's input text (its `text`, else the input JSON), cut in SQL: see INPUT_TEXT_MAX. */
const INPUT_HEAD = `left(CASE WHEN jsonb_typeof(r.input::jsonb -> 'text') = 'string'
  THEN r.input::jsonb ->> 'text' ELSE r.input END, ${INPUT_TEXT_MAX + 1})`;

export async function listPendingApprovals(
  sql: Sql,
  tenant: string,
  limit: number,
): Promise<PendingApproval[]> {
  const rows = await sql.rows<ApprovalRow & { input_head: string }>(
    `SELECT a.*, ${INPUT_HEAD} AS input_head
     FROM approvals a JOIN runs r ON r.run_id = a.run_id
     WHERE a.tenant = $1 AND a.status = 'pending'
     ORDER BY a.requested_at, a.run_id, a.call_id LIMIT $2`,
    [tenant, limit],
  );
  return rows.map(toPendingApproval);
}

export async function listRunApprovals(
  sql: Sql,
  tenant: string,
  runId: string,
): Promise<Approval[] | null> {
  const run = await sql.one('SELECT 1 FROM runs WHERE run_id = $1 AND tenant = $2', [
    runId,
    tenant,
  ]);
  if (!run) return null;
  const rows = await sql.rows<ApprovalRow>(
    'SELECT * FROM approvals WHERE run_id = $1 ORDER BY requested_at, call_id',
    [runId],
  );
  return rows.map(toApproval);
}

export async function expireApprovals(ctx: PgContext, limit: number): Promise<number> {
  // Read-only probe first: an idle sweep opens no write transaction (it runs every second
  // on every worker). The time is the store clock's, as in the transaction.
  const probe = await ctx.read.one(
    `SELECT 1 FROM approvals WHERE status = 'pending' AND expires_at IS NOT NULL
       AND expires_at <= $1 LIMIT 1`,
    [await ctx.now()],
  );
  if (!probe) return 0;
  return ctx.write(async (tx) => {
    // SKIP LOCKED: sweeps of several processes share the due rows instead of queueing.
    const due = await tx.rows<ApprovalRow>(
      `SELECT a.* FROM approvals a JOIN runs r ON r.run_id = a.run_id
       WHERE a.status = 'pending' AND a.expires_at IS NOT NULL AND a.expires_at <= $1
         AND r.status = 'waiting'
       ORDER BY a.expires_at LIMIT $2 FOR UPDATE OF r, a SKIP LOCKED`,
      [tx.now, limit],
    );
    for (const row of due) await settle(tx, row, 'timed_out', TIMEOUT_NOTE);
    return due.length;
  });
}

/** A waiting run that ends otherwise (cancel, agent deleted): its approvals close. */
export function cancelPendingApprovals(tx: Tx, runIds: readonly string[]): Promise<void> {
  return within(tx, (writes) => shared.cancelPendingApprovals(writes, runIds));
}
