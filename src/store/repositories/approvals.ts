// Approvals, for both backends: what other writes do to a run's pending approvals.

import { sql } from '../sql/query.ts';
import type { Op, Writes } from '../sql/steps.ts';

/** Inside the write that ends the runs (cancel, fail): their pending approvals with them. */
export function* cancelPendingApprovals(tx: Writes, runIds: readonly string[]): Op<void> {
  if (runIds.length === 0) return;
  yield* tx.run(
    sql`UPDATE approvals SET status = 'cancelled', decided_at = ${tx.now}
        WHERE ${tx.dialect.inList(sql`run_id`, runIds)} AND status = 'pending'`,
  );
}
