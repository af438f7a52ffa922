// The shared usage repository's writes (../repositories/usage.ts) inside the run writes
// still written per backend (run-writes.ts, runs.ts), in their transaction.

import type { ProgressInput } from '../store.ts';
import * as usage from '../repositories/usage.ts';
import type { Tx } from './context.ts';
import { within } from './steps.ts';

/** Inside appendProgress's transaction: the `model.response` usage of this write. */
export function recordUsage(
  tx: Tx,
  run: { tenant: string; run_id: string; agent: string; scope: string },
  progress: ProgressInput,
): Promise<void> {
  return within(tx, (writes) => usage.recordUsage(writes, run, progress));
}

/** Inside enqueueRun's transaction: a new turn past the daily budget is refused. */
export function requireDailyBudget(tx: Tx, tenant: string): Promise<void> {
  return within(tx, (writes) => usage.requireDailyBudget(writes, tenant));
}
