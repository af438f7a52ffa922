// The one finalization call of a run attempt (docs/architecture.md, step 8): output +
// status + terminal trace + thread context (+ delivery) in a single fenced store
// transaction. A LEASE_LOST answer means another attempt or a cancel owns the run now:
// this worker stops quietly and never retries the write.

import type { RunErrorCode } from '../errors.ts';
import { isKeelError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Fence, FinalizeInput, RunStore } from '../store/store.ts';
import type { Run, RunOutcome } from '../types.ts';

type FailedOutcome = Extract<RunOutcome, { status: 'failed' }>;

/** The one way a run failure is built: a catalogue code and a message for the caller. */
export function runFailed(code: RunErrorCode, message: string): FailedOutcome {
  return { status: 'failed', error: { code, message } };
}

/** Returns the finalized run, or null when this worker no longer holds it. */
export async function finalizeRun(
  store: Pick<RunStore, 'finalizeRun'>,
  logger: Logger,
  fence: Fence,
  input: FinalizeInput,
): Promise<Run | null> {
  try {
    return await store.finalizeRun(fence, input);
  } catch (error) {
    if (isKeelError(error, 'LEASE_LOST')) {
      logger.info(
        { run_id: fence.run_id, attempt: fence.attempt, status: input.status },
        'finalize rejected: this worker no longer holds the run',
      );
      return null;
    }
    throw error;
  }
}
