// The delivery outbox on SQLite: only an adapter for the per-backend finalization that
// still calls it; the outbox is written once in ../repositories/deliveries.ts.

import type { StoreChange } from '../store.ts';
import type { StoreContext } from './context.ts';
import * as outbox from '../repositories/deliveries.ts';
import { within } from './steps.ts';
import type { RunRow } from './rows.ts';

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
