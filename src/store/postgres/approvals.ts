// Approvals on PostgreSQL: only an adapter for the per-backend run writes (cancel, fail)
// that still call it; approvals are written once in ../repositories/approvals.ts.

import * as shared from '../repositories/approvals.ts';
import type { Tx } from './context.ts';
import { within } from './steps.ts';

/** A waiting run that ends otherwise (cancel, agent deleted): its approvals close. */
export function cancelPendingApprovals(tx: Tx, runIds: readonly string[]): Promise<void> {
  return within(tx, (writes) => shared.cancelPendingApprovals(writes, runIds));
}
