// The delivery outbox on PostgreSQL: only an adapter for the per-backend finalization
// that still calls it; the outbox is written once in ../repositories/deliveries.ts.

import type { Tx } from './context.ts';
import * as outbox from '../repositories/deliveries.ts';
import { within } from './steps.ts';
import type { RunRow } from './rows.ts';

/** Called by the finalization transaction: the run's one `result` delivery. */
export function insertDeliveryForRun(tx: Tx, run: RunRow, destination: string): Promise<void> {
  return within(tx, (writes) => outbox.insertDeliveryForRun(writes, run, destination));
}
