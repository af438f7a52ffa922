// The shared run writes (../repositories/run-writes.ts) for PostgreSQL code that still
// opens its own transaction (steering's interrupt cancels the lane's holder): the step
// runs on that transaction's client.

import * as runWrites from '../repositories/run-writes.ts';
import type { Tx } from './context.ts';
import type { RunRow } from './rows.ts';
import { within } from './steps.ts';

/** queued/running/waiting → cancelled inside the caller's transaction; undefined when it ended. */
export function cancelIn(
  tx: Tx,
  current: { tenant: string; run_id: string; status: string },
  reason: string | null,
): Promise<RunRow | undefined> {
  return within(tx, (writes) => runWrites.cancelIn(writes, current, reason));
}
