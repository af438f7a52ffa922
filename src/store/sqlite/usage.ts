// The shared usage repository's writes (../repositories/usage.ts) inside the run writes
// still written per backend (run-writes.ts, runs.ts), in their synchronous write.

import type { ProgressInput, StoreChange } from '../store.ts';
import * as usage from '../repositories/usage.ts';
import type { StoreContext } from './context.ts';
import { within } from './steps.ts';

/** Inside appendProgress's transaction: the `model.response` usage of this write. */
export function recordUsage(
  ctx: StoreContext,
  changes: StoreChange[],
  run: { tenant: string; run_id: string; agent: string; scope: string },
  progress: ProgressInput,
  now: number,
): void {
  within(ctx, (tx) => usage.recordUsage(tx, run, progress), { now, changes });
}

/** Inside enqueueRun's transaction: a new turn past the daily budget is refused. */
export function requireDailyBudget(
  ctx: StoreContext,
  changes: StoreChange[],
  tenant: string,
): void {
  within(ctx, (tx) => usage.requireDailyBudget(tx, tenant), { changes });
}
