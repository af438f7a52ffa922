// The shared run writes (../repositories/run-writes.ts) for SQLite code that still opens
// its own write (steering's interrupt cancels the lane's holder): the step runs inside
// that write, with its changes.

import * as runWrites from '../repositories/run-writes.ts';
import type { StoreChange } from '../store.ts';
import type { StoreContext } from './context.ts';
import type { RunRow } from './rows.ts';
import { within } from './steps.ts';

/** queued/running/waiting → cancelled inside the caller's transaction; undefined when it ended. */
export function cancelIn(
  ctx: StoreContext,
  changes: StoreChange[],
  current: { tenant: string; run_id: string; status: string },
  reason: string | null,
): RunRow | undefined {
  return within(ctx, (tx) => runWrites.cancelIn(tx, current, reason), { changes });
}
