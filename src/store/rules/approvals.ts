// The approval rules both backends share (docs/approvals.md): what a request stores and
// journals, which decisions are accepted, what a decision or a timeout leaves behind, and
// the row → Approval mapping. The statements themselves are backend SQL.

import { KeelError } from '../../errors.ts';
import type { JsonObject } from '../../types.ts';
import { iso } from '../rows.ts';
import type {
  Approval,
  ApprovalDecision,
  ApprovalRequest,
  ApprovalStatus,
  Fence,
  PendingApproval,
  StoreChange,
} from '../shapes.ts';

export interface ApprovalRow {
  run_id: string;
  call_id: string;
  tenant: string;
  agent: string;
  scope: string;
  step: number;
  tool: string;
  arguments: string;
  status: ApprovalStatus;
  note: string | null;
  requested_at: number | string;
  expires_at: number | string | null;
  decided_at: number | string | null;
}

function epochMs(value: number | string | null): number | null {
  return value === null ? null : Number(value);
}

export function toApproval(row: ApprovalRow): Approval {
  const expires = epochMs(row.expires_at);
  const decided = epochMs(row.decided_at);
  return {
    run_id: row.run_id,
    call_id: row.call_id,
    tenant: row.tenant,
    agent: row.agent,
    scope: row.scope,
    step: Number(row.step),
    tool: row.tool,
    arguments: row.arguments,
    status: row.status,
    note: row.note,
    requested_at: iso(Number(row.requested_at)),
    expires_at: expires === null ? null : iso(expires),
    decided_at: decided === null ? null : iso(decided),
  };
}

/**
 * How much of a run's input a pending approval shows (`input_text`): enough to recall
 * what was asked, never a megabyte per row of a 500-row list. Both backends cut the
 * text in SQL to one character more than this, so a longer input is known to be longer.
 */
export const INPUT_TEXT_MAX = 2000;

/** A pending approval row joined with the head of its run's input (`input_head`). */
export function toPendingApproval(row: ApprovalRow & { input_head: string }): PendingApproval {
  const head = row.input_head;
  const input_text = head.length > INPUT_TEXT_MAX ? `${head.slice(0, INPUT_TEXT_MAX)}…` : head;
  return { ...toApproval(row), input_text };
}

/**
 * The values of a new pending approval, in the column order both backends insert:
 * run_id, call_id, tenant, agent, scope, step, tool, arguments, requested_at, expires_at.
 */
export function approvalValues(
  fence: Fence,
  lane: { tenant: string; agent: string; scope: string },
  request: ApprovalRequest,
  now: number,
): (string | number | null)[] {
  return [
    fence.run_id,
    request.call.call_id,
    lane.tenant,
    lane.agent,
    lane.scope,
    request.step,
    request.call.name,
    request.call.arguments,
    now,
    request.timeout_ms === null ? null : now + request.timeout_ms,
  ];
}

/**
 * The events of the waiting transaction: the request, and `run.released` — the attempt
 * ends on purpose, so it does not count toward max_attempts (resume-plan.ts).
 */
export function requestedEvents(
  fence: Fence,
  request: ApprovalRequest,
  expiresAt: number | null,
): { type: string; data: JsonObject }[] {
  return [
    {
      type: 'approval.requested',
      data: {
        call_id: request.call.call_id,
        name: request.call.name,
        step: request.step,
        expires_at: expiresAt === null ? null : iso(expiresAt),
      },
    },
    { type: 'run.released', data: { attempt: fence.attempt, reason: 'waiting' } },
  ];
}

export function decisionStatus(decision: ApprovalDecision['decision']): ApprovalStatus {
  return decision === 'approve' ? 'approved' : 'denied';
}

export function decidedEventData(
  callId: string,
  status: ApprovalStatus,
  note: string | null,
): JsonObject {
  return { call_id: callId, status, note };
}

/** What an APPROVAL_TIMEOUT leaves as the note. */
export const TIMEOUT_NOTE = 'nobody decided within approval_timeout_ms';

export function approvalNotFound(runId: string, callId: string): KeelError {
  return new KeelError('APPROVAL_NOT_FOUND', `run ${runId} has no approval for call ${callId}`);
}

/** A second decision, or a decision for a run that no longer waits (cancelled). */
export function approvalAlreadyDecided(approval: ApprovalRow, runStatus: string): KeelError {
  const state =
    approval.status === 'pending' ? `its run is ${runStatus}` : `it is ${approval.status}`;
  return new KeelError(
    'APPROVAL_DECIDED',
    `the approval of call ${approval.call_id} cannot be decided: ${state}`,
    { status: approval.status },
  );
}

/** The decided run is claimable again: workers wake as for a new run. */
export function resumableChange(tenant: string, runId: string): StoreChange {
  return { kind: 'run.queued', tenant, run_id: runId };
}
