// The delivery outbox: rows written by finalization, claimed by adapters with a fresh
// random token and an expiry (rows locked with SKIP LOCKED, so two adapters in two
// processes split the due rows instead of queueing on them), acknowledged by one
// conditional update.

import {
  ackTransition,
  retryTransition,
  claimedDelivery,
  claimExpired,
  hashClaimToken,
  newClaimToken,
} from '../rules/deliveries.ts';
import type { ClaimedDelivery, Delivery } from '../../types.ts';
import type {
  Approval,
  DeliveryAckInput,
  DeliveryClaimInput,
  DeliveryFilter,
  Page,
} from '../store.ts';
import type { PgContext, Sql, Tx } from './context.ts';
import * as outbox from '../repositories/deliveries.ts';
import { within } from './steps.ts';
import { listByKey } from './keyset.ts';
import { deliveryList } from '../rules/keyset.ts';
import type { DeliveryRow, RunRow } from './rows.ts';
import { toDelivery } from './rows.ts';
import { CLAIM_ROUND, resourceChange } from '../rules/resource-changes.ts';

/** Called by the finalization transaction: the run's one `result` delivery. */
export function insertDeliveryForRun(tx: Tx, run: RunRow, destination: string): Promise<void> {
  return within(tx, (writes) => outbox.insertDeliveryForRun(writes, run, destination));
}

/** Called by the approval request's transaction when the turn has a destination. */
export function insertApprovalDelivery(
  tx: Tx,
  approval: Approval,
  destination: string,
): Promise<void> {
  return within(tx, (writes) => outbox.insertApprovalDelivery(writes, approval, destination));
}

/** A byte-prefix test without LIKE (a prefix may contain % or _). */
function prefixClause(column: string, prefix: string | undefined, index: number): string {
  return prefix === undefined || prefix === ''
    ? ''
    : ` AND left(${column}, length($${index})) = $${index}`;
}

export async function claimDeliveries(
  ctx: PgContext,
  tenant: string,
  input: DeliveryClaimInput,
): Promise<ClaimedDelivery[]> {
  const claimed = await ctx.write(async (tx) => {
    const prefix = input.destination_prefix ? [input.destination_prefix] : [];
    // Rows out of attempts die instead of being handed out again: an expired claim
    // counted as an attempt when it was made.
    const died = await tx.count(
      `UPDATE deliveries SET status = 'dead', updated_at = $1, claim_token_hash = NULL,
         last_error = COALESCE(last_error, 'no acknowledgement after ' || attempt || ' attempts')
       WHERE tenant = $2 AND attempt >= $3
         AND ((status = 'claimed' AND claim_expires_at <= $1) OR status = 'pending')${prefixClause('destination', input.destination_prefix, 4)}`,
      [tx.now, tenant, input.max_attempts, ...prefix],
    );
    const due = await tx.rows<DeliveryRow & { run_output: string | null }>(
      `SELECT d.*, r.output AS run_output FROM deliveries d JOIN runs r ON r.run_id = d.run_id
       WHERE d.tenant = $1
         AND ((d.status = 'pending' AND d.next_attempt_at <= $2)
           OR (d.status = 'claimed' AND d.claim_expires_at <= $2))${prefixClause('d.destination', input.destination_prefix, 4)}
       ORDER BY d.next_attempt_at, d.delivery_id LIMIT $3
       FOR UPDATE OF d SKIP LOCKED`,
      [tenant, tx.now, input.limit, ...prefix],
    );
    if (died + due.length > 0) tx.changes.push(resourceChange(tenant, 'delivery', CLAIM_ROUND));
    const result: ClaimedDelivery[] = [];
    for (const row of due) {
      const token = newClaimToken();
      const expiresAt = tx.now + input.lease_ms;
      await tx.count(
        `UPDATE deliveries SET status = 'claimed', attempt = attempt + 1, claim_token_hash = $1,
           claim_expires_at = $2, updated_at = $3 WHERE delivery_id = $4`,
        [hashClaimToken(token), expiresAt, tx.now, row.delivery_id],
      );
      result.push(claimedDelivery(row, token, expiresAt));
    }
    return result;
  });
  if (claimed.length > 0) ctx.failpoints.hit('outbox.claim.after_commit');
  return claimed;
}

async function deliveryRow(
  sql: Sql,
  tenant: string,
  id: string,
  lock = false,
): Promise<DeliveryRow | undefined> {
  return sql.one<DeliveryRow>(
    `SELECT * FROM deliveries WHERE delivery_id = $1 AND tenant = $2${lock ? ' FOR UPDATE' : ''}`,
    [id, tenant],
  );
}

export async function ackDelivery(
  ctx: PgContext,
  tenant: string,
  deliveryId: string,
  input: DeliveryAckInput,
): Promise<Delivery> {
  return ctx.write(async (tx) => {
    const {
      row,
      status,
      next_attempt_at: nextAttemptAt,
    } = ackTransition(await deliveryRow(tx, tenant, deliveryId, true), deliveryId, input, tx.now);
    const updated = await tx.one<DeliveryRow>(
      `UPDATE deliveries SET status = $1, next_attempt_at = $2, last_error = COALESCE($3, last_error),
         claim_token_hash = NULL, claim_expires_at = NULL, updated_at = $4
       WHERE delivery_id = $5 AND status = 'claimed' AND claim_token_hash = $6
         AND claim_expires_at > $4
       RETURNING *`,
      [status, nextAttemptAt, input.error ?? null, tx.now, deliveryId, row.claim_token_hash],
    );
    if (!updated) throw claimExpired(deliveryId);
    tx.changes.push(resourceChange(tenant, 'delivery', deliveryId));
    ctx.failpoints.hit('outbox.ack.before_commit');
    return toDelivery(updated);
  });
}

export async function retryDeadDelivery(
  ctx: PgContext,
  tenant: string,
  deliveryId: string,
): Promise<Delivery> {
  return ctx.write(async (tx) => {
    retryTransition(await deliveryRow(tx, tenant, deliveryId, true), deliveryId);
    const updated = await tx.one<DeliveryRow>(
      `UPDATE deliveries SET status = 'pending', attempt = 0, next_attempt_at = $1,
         claim_token_hash = NULL, claim_expires_at = NULL, updated_at = $1
       WHERE delivery_id = $2 AND tenant = $3 AND status = 'dead'
       RETURNING *`,
      [tx.now, deliveryId, tenant],
    );
    // The row is locked FOR UPDATE and was dead, so the update found it; a second check
    // only guards the conditional update itself.
    if (!updated) return toDelivery(retryTransition(undefined, deliveryId));
    tx.changes.push(resourceChange(tenant, 'delivery', deliveryId));
    return toDelivery(updated);
  });
}

export async function listDeliveries(
  sql: Sql,
  tenant: string,
  filter: DeliveryFilter,
  limit: number,
  cursor?: string,
): Promise<Page<Delivery>> {
  const prefix = filter.destination_prefix
    ? [
        {
          value: filter.destination_prefix,
          sql: (param: () => string) => `left(destination, length(${param()})) = ${param()}`,
        },
      ]
    : [];
  return listByKey(
    sql,
    { ...deliveryList(filter), tenant, conditions: prefix, limit, cursor },
    toDelivery,
    (row: DeliveryRow) => row.delivery_id,
  );
}
