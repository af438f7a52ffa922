// The delivery outbox's rows, for both backends: the one `result` delivery a succeeded
// run leaves and the notice of a pending approval, each written inside the transaction
// that makes it due and announced after its commit.

import { newId } from '../../ids.ts';
import type { Approval } from '../store.ts';
import type { RunRow } from '../rows.ts';
import {
  approvalDeliveryValues,
  deliveryDueChange,
  resultIdempotencyKey,
} from '../rules/deliveries.ts';
import { sql } from '../sql/query.ts';
import type { Op, Writes } from '../sql/steps.ts';

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
