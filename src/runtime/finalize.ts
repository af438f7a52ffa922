// The one finalization call of a run attempt (DESIGN.md §8): output + status + terminal
// trace + thread context (+ delivery) in a single fenced store transaction. A LEASE_LOST
// answer means another attempt or a cancel owns the run now: this worker stops quietly
// and never retries the write.

import type { Logger } from '../logger.ts';
import type { Fence, FinalizeInput, RunStore } from '../store/store.ts';
import type { JsonObject, Run, RunError, Usage } from '../types.ts';
import { isKeelError } from '../errors.ts';

export type FinalOutcome =
  | { status: 'succeeded'; output: JsonObject; replyText: string; contextWindow: number }
  | { status: 'failed'; error: RunError };

export interface FinalizeArgs {
  store: RunStore;
  logger: Logger;
  fence: Fence;
  outcome: FinalOutcome;
  steps: number;
  usage: Usage;
  elapsedMs: number;
}

/** Returns the finalized run, or null when this worker no longer holds it. */
export async function finalizeRun(args: FinalizeArgs): Promise<Run | null> {
  const { outcome } = args;
  const input: FinalizeInput =
    outcome.status === 'succeeded'
      ? {
          status: 'succeeded',
          output: outcome.output,
          reply_text: outcome.replyText,
          steps: args.steps,
          usage: args.usage,
          elapsed_ms: args.elapsedMs,
          context_window: outcome.contextWindow,
        }
      : {
          status: 'failed',
          error: outcome.error,
          steps: args.steps,
          usage: args.usage,
          elapsed_ms: args.elapsedMs,
        };
  try {
    return await args.store.finalizeRun(args.fence, input);
  } catch (error) {
    if (isKeelError(error, 'LEASE_LOST')) {
      args.logger.info(
        { run_id: args.fence.run_id, attempt: args.fence.attempt, status: outcome.status },
        'finalize rejected: this worker no longer holds the run',
      );
      return null;
    }
    throw error;
  }
}
