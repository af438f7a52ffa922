// The delivery outbox: rows written by finalization, claimed by adapters with a fresh
// random token and an expiry, acknowledged by one conditional update.

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
  StoreChange,
} from '../store.ts';
import type { StoreContext } from './context.ts';
import * as outbox from '../repositories/deliveries.ts';
import { within } from './steps.ts';
import { listByKey } from './keyset.ts';
import { deliveryList } from '../rules/keyset.ts';
import type { DeliveryRow, RunRow } from './rows.ts';
import { toDelivery } from './rows.ts';
import { CLAIM_ROUND, resourceChange } from '../rules/resource-changes.ts';

/** Called by the finalization transaction: the run's one `result` delivery. */
export function insertDeliveryForRun(
  ctx: StoreContext,
  changes: StoreChange[],
  run: RunRow,
  destination: string,
  now: number,
): void {
  within(ctx, (tx) => outbox.insertDeliveryForRun(tx, run, destination), { now, changes });
}

/** Called by the approval request's transaction when the turn has a destination. */
export function insertApprovalDelivery(
  ctx: StoreContext,
  changes: StoreChange[],
  approval: Approval,
  destination: string,
  now: number,
): void {
  within(ctx, (tx) => outbox.insertApprovalDelivery(tx, approval, destination), { now, changes });
}

function prefixClause(
  column: string,
  prefix: string | undefined,
): { sql: string; params: string[] } {
  // substr comparison, not LIKE: a prefix may contain % or _.
  return prefix === undefined || prefix === ''
    ? { sql: '', params: [] }
    : { sql: ` AND substr(${column}, 1, length(?)) = ?`, params: [prefix, prefix] };
}

export function claimDeliveries(
  ctx: StoreContext,
  tenant: string,
  input: DeliveryClaimInput,
): ClaimedDelivery[] {
  const claimed = ctx.write((changes) => {
    const now = ctx.now();
    const prefix = prefixClause('destination', input.destination_prefix);
    const joinedPrefix = prefixClause('d.destination', input.destination_prefix);
    // Rows out of attempts die instead of being handed out again: an expired claim
    // counted as an attempt when it was made.
    const died = ctx
      .sql(
        `UPDATE deliveries SET status = 'dead', updated_at = ?, claim_token_hash = NULL,
           last_error = COALESCE(last_error, 'no acknowledgement after ' || attempt || ' attempts')
         WHERE tenant = ? AND attempt >= ?
           AND ((status = 'claimed' AND claim_expires_at <= ?) OR status = 'pending')${prefix.sql}`,
      )
      .run(now, tenant, input.max_attempts, now, ...prefix.params).changes;
    const due = ctx
      .sql(
        `SELECT d.*, r.output AS run_output FROM deliveries d JOIN runs r ON r.run_id = d.run_id
         WHERE d.tenant = ?
           AND ((d.status = 'pending' AND d.next_attempt_at <= ?)
             OR (d.status = 'claimed' AND d.claim_expires_at <= ?))${joinedPrefix.sql}
         ORDER BY d.next_attempt_at, d.delivery_id LIMIT CAST(? AS INTEGER)`,
      )
      .all(tenant, now, now, ...joinedPrefix.params, input.limit) as (DeliveryRow & {
      run_output: string | null;
    })[];
    const update = ctx.sql(
      `UPDATE deliveries SET status = 'claimed', attempt = attempt + 1, claim_token_hash = ?,
         claim_expires_at = ?, updated_at = ?
       WHERE delivery_id = ?`,
    );
    if (died + due.length > 0) changes.push(resourceChange(tenant, 'delivery', CLAIM_ROUND));
    return due.map((row): ClaimedDelivery => {
      const token = newClaimToken();
      const expiresAt = now + input.lease_ms;
      update.run(hashClaimToken(token), expiresAt, now, row.delivery_id);
      return claimedDelivery(row, token, expiresAt);
    });
  });
  if (claimed.length > 0) ctx.afterCommit(() => ctx.failpoints.hit('outbox.claim.after_commit'));
  return claimed;
}

function deliveryRow(ctx: StoreContext, tenant: string, id: string): DeliveryRow | undefined {
  return ctx
    .sql('SELECT * FROM deliveries WHERE delivery_id = ? AND tenant = ?')
    .get(id, tenant) as DeliveryRow | undefined;
}

export function ackDelivery(
  ctx: StoreContext,
  tenant: string,
  deliveryId: string,
  input: DeliveryAckInput,
): Delivery {
  return ctx.write((changes) => {
    const now = ctx.now();
    const {
      row,
      status,
      next_attempt_at: nextAttemptAt,
    } = ackTransition(deliveryRow(ctx, tenant, deliveryId), deliveryId, input, now);
    // Conditional on the very claim that was checked, so nothing can slip in between.
    const changed = ctx
      .sql(
        `UPDATE deliveries SET status = ?, next_attempt_at = ?, last_error = COALESCE(?, last_error),
           claim_token_hash = NULL, claim_expires_at = NULL, updated_at = ?
         WHERE delivery_id = ? AND status = 'claimed' AND claim_token_hash = ? AND claim_expires_at > ?`,
      )
      .run(
        status,
        nextAttemptAt,
        input.error ?? null,
        now,
        deliveryId,
        row.claim_token_hash,
        now,
      ).changes;
    if (changed !== 1) throw claimExpired(deliveryId);
    changes.push(resourceChange(tenant, 'delivery', deliveryId));
    ctx.failpoints.hit('outbox.ack.before_commit');
    return toDelivery(deliveryRow(ctx, tenant, deliveryId) as DeliveryRow);
  });
}

export function retryDeadDelivery(ctx: StoreContext, tenant: string, deliveryId: string): Delivery {
  return ctx.write((changes) => {
    const now = ctx.now();
    retryTransition(deliveryRow(ctx, tenant, deliveryId), deliveryId);
    const changed = ctx
      .sql(
        `UPDATE deliveries SET status = 'pending', attempt = 0, next_attempt_at = ?,
           claim_token_hash = NULL, claim_expires_at = NULL, updated_at = ?
         WHERE delivery_id = ? AND tenant = ? AND status = 'dead'`,
      )
      .run(now, now, deliveryId, tenant).changes;
    const row = deliveryRow(ctx, tenant, deliveryId);
    if (changed !== 1) retryTransition(row, deliveryId);
    changes.push(resourceChange(tenant, 'delivery', deliveryId));
    return toDelivery(row as DeliveryRow);
  });
}

export function listDeliveries(
  ctx: StoreContext,
  tenant: string,
  filter: DeliveryFilter,
  limit: number,
  cursor?: string,
): Page<Delivery> {
  const prefix = filter.destination_prefix
    ? [
        {
          value: filter.destination_prefix,
          sql: (param: () => string) => `substr(destination, 1, length(${param()})) = ${param()}`,
        },
      ]
    : [];
  return listByKey(
    ctx,
    { ...deliveryList(filter), tenant, conditions: prefix, limit, cursor },
    toDelivery,
    (row: DeliveryRow) => row.delivery_id,
  );
}
