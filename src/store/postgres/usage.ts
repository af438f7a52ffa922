// The shared usage repository's budget check (../repositories/usage.ts) inside the
// enqueue still written per backend (runs.ts), in its transaction.

import * as usage from '../repositories/usage.ts';
import type { Tx } from './context.ts';
import { within } from './steps.ts';

/** Inside enqueueRun's transaction: a new turn past the daily budget is refused. */
export function requireDailyBudget(tx: Tx, tenant: string): Promise<void> {
  return within(tx, (writes) => usage.requireDailyBudget(writes, tenant));
}
