// The outbox rules both backends share: the retry backoff, how claim tokens are made and
// kept (only their sha256 is stored; a presented token is compared in constant time),
// which ack is accepted and what it does to the row, and what a claim hands out. Only
// the SQL that reads and writes the rows differs between backends.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { KeelError } from '../../errors.ts';
import type { ClaimedDelivery, Delivery, JsonObject } from '../../types.ts';
import type { Approval, StoreChange } from '../shapes.ts';
import { iso, parseJson } from '../rows.ts';
import type { DeliveryRow } from '../rows.ts';
import type { DeliveryAckInput } from '../store.ts';

const BACKOFF_BASE_MS = 1000;
const BACKOFF_CAP_MS = 5 * 60 * 1000;
const BACKOFF_JITTER = 0.2;

/** Exponential from 1 s, capped at 5 min, ±20 % jitter so retries do not bunch up. */
export function deliveryBackoffMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(BACKOFF_BASE_MS * 2 ** Math.max(0, attempt - 1), BACKOFF_CAP_MS);
  return Math.round(base * (1 - BACKOFF_JITTER + 2 * BACKOFF_JITTER * random()));
}

export function hashClaimToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

function claimTokenMatches(storedHash: string | null, token: string): boolean {
  if (storedHash === null) return false;
  return timingSafeEqual(Buffer.from(storedHash, 'hex'), Buffer.from(hashClaimToken(token), 'hex'));
}

/** A fresh claim token: 32 random bytes, base64url; the row keeps only its hash. */
export function newClaimToken(): string {
  return randomBytes(32).toString('base64url');
}

/** What a claimer receives for a due row it has just claimed with `token`. */
export function claimedDelivery(
  row: DeliveryRow & { run_output: string | null },
  token: string,
  expiresAt: number,
): ClaimedDelivery {
  // An approval delivery hands out the call it asks about; a result delivery the output.
  const payload = row.kind === 'approval' ? row.payload : row.run_output;
  return {
    delivery_id: row.delivery_id,
    run_id: row.run_id,
    destination: row.destination,
    kind: row.kind,
    call_id: row.call_id,
    payload: payload === null ? {} : parseJson<JsonObject>(payload),
    attempt: row.attempt + 1,
    claim_token: token,
    claim_expires_at: iso(expiresAt),
    idempotency_key: row.idempotency_key,
  };
}

export function claimExpired(deliveryId: string): KeelError {
  return new KeelError('CLAIM_EXPIRED', `the claim on ${deliveryId} has expired`);
}

/**
 * Checks an ack against the row as read in the ack's transaction; throws
 * DELIVERY_NOT_FOUND, DELIVERY_NOT_CLAIMED, CLAIM_TOKEN_MISMATCH or CLAIM_EXPIRED.
 * Returns the row's new status and next attempt time. The backend's update must still
 * be conditional on this very claim (token hash and expiry), so nothing slips in between.
 */
export function ackTransition(
  row: DeliveryRow | undefined,
  deliveryId: string,
  input: DeliveryAckInput,
  now: number,
): { row: DeliveryRow; status: Delivery['status']; next_attempt_at: number } {
  if (!row) throw new KeelError('DELIVERY_NOT_FOUND', `delivery ${deliveryId} not found`);
  if (row.status !== 'claimed') {
    throw new KeelError(
      'DELIVERY_NOT_CLAIMED',
      `delivery ${deliveryId} is ${row.status}, not claimed`,
    );
  }
  if (!claimTokenMatches(row.claim_token_hash, input.claim_token)) {
    throw new KeelError('CLAIM_TOKEN_MISMATCH', `the claim token of ${deliveryId} does not match`);
  }
  if (row.claim_expires_at === null || row.claim_expires_at <= now) throw claimExpired(deliveryId);
  if (input.outcome === 'delivered') {
    return { row, status: 'delivered', next_attempt_at: row.next_attempt_at };
  }
  if (input.outcome === 'failed')
    return { row, status: 'failed', next_attempt_at: row.next_attempt_at };
  if (row.attempt >= input.max_attempts) {
    return { row, status: 'dead', next_attempt_at: row.next_attempt_at };
  }
  return {
    row,
    status: 'pending',
    next_attempt_at: now + Math.max(input.retry_after_ms ?? 0, deliveryBackoffMs(row.attempt)),
  };
}

/**
 * A dead delivery handed back to the outbox by an operator: pending, due now, with a
 * fresh attempt budget (a claim kills rows whose attempts are spent). Throws
 * DELIVERY_NOT_FOUND or DELIVERY_NOT_DEAD; the backend's update is conditional on
 * `status = 'dead'`, so a concurrent retry changes the row once.
 */
export function retryTransition(row: DeliveryRow | undefined, deliveryId: string): DeliveryRow {
  if (!row) throw new KeelError('DELIVERY_NOT_FOUND', `delivery ${deliveryId} not found`);
  if (row.status !== 'dead') {
    throw new KeelError('DELIVERY_NOT_DEAD', `delivery ${deliveryId} is ${row.status}, not dead`);
  }
  return row;
}

/** The outbox row of the run's final output: one per run. */
export function resultIdempotencyKey(runId: string): string {
  return `run:${runId}:delivery`;
}

/**
 * The outbox row an approval request leaves when its turn has a delivery destination
 * (docs/approvals.md): one per (run, call), written in the request's transaction, so a
 * channel can show the call with Approve/Deny. Values in the column order both backends
 * insert: idempotency_key, call_id, payload.
 */
export function approvalDeliveryValues(approval: Approval): [string, string, string] {
  const payload = {
    call_id: approval.call_id,
    tool: approval.tool,
    arguments: approval.arguments,
    step: approval.step,
    agent: approval.agent,
    scope: approval.scope,
    requested_at: approval.requested_at,
    expires_at: approval.expires_at,
  };
  return [
    `run:${approval.run_id}:approval:${approval.call_id}`,
    approval.call_id,
    JSON.stringify(payload),
  ];
}

/**
 * Wakes claim long polls and the delivery worker of `destination` (the webhook worker
 * for `webhook:…`): a run's result or an approval request is due now.
 */
export function deliveryDueChange(tenant: string, runId: string, destination: string): StoreChange {
  return { kind: 'delivery.due', tenant, run_id: runId, destination };
}
