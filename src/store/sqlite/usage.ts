// The shared usage repository's budget check (../repositories/usage.ts) inside the
// enqueue still written per backend (runs.ts), in its synchronous write.

import type { StoreChange } from '../store.ts';
import * as usage from '../repositories/usage.ts';
import type { StoreContext } from './context.ts';
import { within } from './steps.ts';

/** Inside enqueueRun's transaction: a new turn past the daily budget is refused. */
export function requireDailyBudget(
  ctx: StoreContext,
  changes: StoreChange[],
  tenant: string,
): void {
  within(ctx, (tx) => usage.requireDailyBudget(tx, tenant), { changes });
}
