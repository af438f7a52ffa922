// The delivery outbox, for both backends: the one `result` delivery a succeeded run
// leaves and the notice of a pending approval, each written inside the transaction that
// makes it due and announced after its commit; claimed by adapters with a fresh random
// token and an expiry, acknowledged by one conditional update. The rules are
// ../rules/deliveries.ts.

import { newId } from '../../ids.ts';
import type { ClaimedDelivery, Delivery } from '../../types.ts';
import type {
  Approval,
  DeliveryAckInput,
  DeliveryClaimInput,
  DeliveryFilter,
  Page,
} from '../store.ts';
import type { DeliveryRow, RunRow } from '../rows.ts';
import { toDelivery } from '../rows.ts';
import {
  ackTransition,
  approvalDeliveryValues,
  claimedDelivery,
  claimExpired,
  deliveryDueChange,
  hashClaimToken,
  newClaimToken,
  resultIdempotencyKey,
  retryTransition,
} from '../rules/deliveries.ts';
import { deliveryList } from '../rules/keyset.ts';
import { CLAIM_ROUND, resourceChange } from '../rules/resource-changes.ts';
import type { Query } from '../sql/query.ts';
import { limitOf, raw, sql } from '../sql/query.ts';
import type { Op, Reads, Writes } from '../sql/steps.ts';
import { listByKey } from './keyset.ts';

/** Called by the finalization transaction: the run's one `result` delivery. */
export function* insertDeliveryForRun(tx: Writes, run: RunRow, destination: string): Op<void> {
  const inserted = yield* tx.run(
    sql`INSERT INTO deliveries (delivery_id, tenant, run_id, destination, status, attempt,
          idempotency_key, next_attempt_at, created_at, updated_at)
        VALUES (${newId()}, ${run.tenant}, ${run.run_id}, ${destination}, 'pending', 0,
          ${resultIdempotencyKey(run.run_id)}, ${tx.now}, ${tx.now}, ${tx.now})
        ON CONFLICT DO NOTHING`,
  );
  if (inserted > 0) tx.changes.push(deliveryDueChange(run.tenant, run.run_id, destination));
}

/** Called by the approval request's transaction when the turn has a destination. */
export function* insertApprovalDelivery(
  tx: Writes,
  approval: Approval,
  destination: string,
): Op<void> {
  const [key, callId, payload] = approvalDeliveryValues(approval);
  const inserted = yield* tx.run(
    sql`INSERT INTO deliveries (delivery_id, tenant, run_id, destination, status, attempt,
          idempotency_key, next_attempt_at, created_at, updated_at, kind, call_id, payload)
        VALUES (${newId()}, ${approval.tenant}, ${approval.run_id}, ${destination}, 'pending', 0,
          ${key}, ${tx.now}, ${tx.now}, ${tx.now}, 'approval', ${callId}, ${payload})
        ON CONFLICT DO NOTHING`,
  );
  if (inserted > 0)
    tx.changes.push(deliveryDueChange(approval.tenant, approval.run_id, destination));
}

/**
 * `column` starts with `prefix`, compared as text (not LIKE: a prefix may contain % or _).
 * The same form on both backends (PostgreSQL's `left` would do too): neither has an
 * index on the destination, so the plan is the tenant's rows either way.
 */
function startsWith(column: Query, prefix: string | undefined): Query {
  return prefix === undefined || prefix === ''
    ? raw('')
    : sql` AND substr(${column}, 1, length(${prefix})) = ${prefix}`;
}

/**
 * Hands out up to `limit` due rows (pending and due, or claimed with an expired claim),
 * each with a fresh token and an expiry. Rows another claimer holds are skipped
 * (Dialect.skipsLocked): two adapters in two processes split the due rows.
 */
export function* claimDeliveries(
  tx: Writes,
  tenant: string,
  input: DeliveryClaimInput,
): Op<ClaimedDelivery[]> {
  // Rows out of attempts die instead of being handed out again: an expired claim
  // counted as an attempt when it was made. The tenant in each branch of the OR: SQLite
  // then reads the claimed and the pending rows through (tenant, status, …) indexes, not
  // the tenant's whole delivered history (PostgreSQL's plan is the same either way).
  const died = yield* tx.run(
    sql`UPDATE deliveries SET status = 'dead', updated_at = ${tx.now}, claim_token_hash = NULL,
          last_error = COALESCE(last_error, 'no acknowledgement after ' || attempt || ' attempts')
        WHERE attempt >= ${input.max_attempts}
          AND ((tenant = ${tenant} AND status = 'claimed' AND claim_expires_at <= ${tx.now})
            OR (tenant = ${tenant} AND status = 'pending'))${startsWith(raw('destination'), input.destination_prefix)}`,
  );
  const due = yield* tx.rows<DeliveryRow & { run_output: string | null }>(
    sql`SELECT d.*, r.output AS run_output FROM deliveries d JOIN runs r ON r.run_id = d.run_id
        WHERE d.tenant = ${tenant}
          AND ((d.status = 'pending' AND d.next_attempt_at <= ${tx.now})
            OR (d.status = 'claimed' AND d.claim_expires_at <= ${tx.now}))${startsWith(raw('d.destination'), input.destination_prefix)}
        ORDER BY d.next_attempt_at, d.delivery_id LIMIT ${limitOf(input.limit)}${tx.dialect.skipsLocked(['d'])}`,
  );
  if (died + due.length > 0) tx.changes.push(resourceChange(tenant, 'delivery', CLAIM_ROUND));
  const claimed: ClaimedDelivery[] = [];
  const expiresAt = tx.now + input.lease_ms;
  for (const row of due) {
    const token = newClaimToken();
    yield* tx.run(
      sql`UPDATE deliveries SET status = 'claimed', attempt = attempt + 1,
            claim_token_hash = ${hashClaimToken(token)}, claim_expires_at = ${expiresAt},
            updated_at = ${tx.now}
          WHERE delivery_id = ${row.delivery_id}`,
    );
    claimed.push(claimedDelivery(row, token, expiresAt));
  }
  return claimed;
}

function* deliveryRow(tx: Writes, tenant: string, id: string): Op<DeliveryRow | undefined> {
  return yield* tx.one<DeliveryRow>(
    sql`SELECT * FROM deliveries WHERE delivery_id = ${id} AND tenant = ${tenant}${tx.dialect.locksRow}`,
  );
}

/** An adapter's answer for its claim: delivered, failed, or retry later (or dead). */
export function* ackDelivery(
  tx: Writes,
  tenant: string,
  deliveryId: string,
  input: DeliveryAckInput,
): Op<Delivery> {
  const {
    row,
    status,
    next_attempt_at: nextAttemptAt,
  } = ackTransition(yield* deliveryRow(tx, tenant, deliveryId), deliveryId, input, tx.now);
  // Conditional on the very claim that was checked, so nothing can slip in between.
  const updated = yield* tx.one<DeliveryRow>(
    sql`UPDATE deliveries SET status = ${status}, next_attempt_at = ${nextAttemptAt},
          last_error = COALESCE(${input.error ?? null}, last_error),
          claim_token_hash = NULL, claim_expires_at = NULL, updated_at = ${tx.now}
        WHERE delivery_id = ${deliveryId} AND status = 'claimed'
          AND claim_token_hash = ${row.claim_token_hash} AND claim_expires_at > ${tx.now}
        RETURNING *`,
  );
  if (!updated) throw claimExpired(deliveryId);
  tx.changes.push(resourceChange(tenant, 'delivery', deliveryId));
  return toDelivery(updated);
}

/** An operator hands a dead delivery back: pending, due now, with fresh attempts. */
export function* retryDeadDelivery(tx: Writes, tenant: string, deliveryId: string): Op<Delivery> {
  retryTransition(yield* deliveryRow(tx, tenant, deliveryId), deliveryId);
  const updated = yield* tx.one<DeliveryRow>(
    sql`UPDATE deliveries SET status = 'pending', attempt = 0, next_attempt_at = ${tx.now},
          claim_token_hash = NULL, claim_expires_at = NULL, updated_at = ${tx.now}
        WHERE delivery_id = ${deliveryId} AND tenant = ${tenant} AND status = 'dead'
        RETURNING *`,
  );
  // The row was read dead in this write (locked on PostgreSQL, the one writer on SQLite),
  // so the update found it; the check guards the conditional update itself.
  if (!updated) return toDelivery(retryTransition(undefined, deliveryId));
  tx.changes.push(resourceChange(tenant, 'delivery', deliveryId));
  return toDelivery(updated);
}

/** One page of the tenant's deliveries, newest first. */
export function listDeliveries(
  db: Reads,
  tenant: string,
  filter: DeliveryFilter,
  limit: number,
  cursor?: string,
): Op<Page<Delivery>> {
  const prefix = filter.destination_prefix
    ? [
        {
          value: filter.destination_prefix,
          sql: (param: () => string) => `substr(destination, 1, length(${param()})) = ${param()}`,
        },
      ]
    : [];
  return listByKey(
    db,
    { ...deliveryList(filter), tenant, conditions: prefix, limit, cursor },
    toDelivery,
    (row: DeliveryRow) => row.delivery_id,
  );
}
