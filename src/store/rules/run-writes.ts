// The rules of writes to a run: the fence's refusal, what a progress write, a
// finalization and a cancel store, and the events and change notifications they leave.
// The statements are in ../repositories/run-writes.ts.

import { KeelError } from '../../errors.ts';
import type { JsonObject, RunError, RunStatus } from '../../types.ts';
import type { Fence, FinalizeInput, NewEvent, ProgressInput, StoreChange } from '../store.ts';

export function leaseLost(fence: Fence): KeelError {
  return new KeelError(
    'LEASE_LOST',
    `run ${fence.run_id} attempt ${fence.attempt} no longer holds the run`,
  );
}

/** The stored text of an event's data, with its `raw_json` spliced in as `raw`. */
export function eventDataText(event: NewEvent): string {
  const text = JSON.stringify(event.data);
  if (event.raw_json === undefined) return text;
  const rest = text === '{}' ? '{' : `${text.slice(0, -1)},`;
  return `${rest}"raw":${event.raw_json}}`;
}

/** steps, usage, elapsed_ms of a progress write; null keeps the stored value. */
export function progressValues(progress: ProgressInput): {
  steps: number | null;
  usage: string | null;
  elapsed_ms: number | null;
} {
  return {
    steps: progress.steps ?? null,
    usage: progress.usage ? JSON.stringify(progress.usage) : null,
    elapsed_ms: progress.elapsed_ms ?? null,
  };
}

/** What a finalization stores in the run row. */
export function settleValues(
  input: FinalizeInput,
  now: number,
): {
  status: RunStatus;
  output: string | null;
  error: string | null;
  steps: number;
  usage: string;
  elapsed_ms: number;
  finished_at: number;
} {
  const succeeded = input.status === 'succeeded';
  return {
    status: input.status,
    output: succeeded ? JSON.stringify(input.output) : null,
    error: succeeded ? null : JSON.stringify(input.error),
    steps: input.steps,
    usage: JSON.stringify(input.usage),
    elapsed_ms: input.elapsed_ms,
    finished_at: now,
  };
}

/** The data of the terminal `run.succeeded` / `run.failed` event. */
export function terminalEventData(input: FinalizeInput): JsonObject {
  return input.status === 'succeeded'
    ? { output: input.output, usage: { ...input.usage }, steps: input.steps }
    : { error: { ...input.error } };
}

export function terminalChange(tenant: string, runId: string, status: RunStatus): StoreChange {
  return { kind: 'run.terminal', tenant, run_id: runId, status };
}

/**
 * The order in which a write that ends many runs at once (failActiveRuns) writes their
 * terminal events and announces them: ascending run_id on both backends. RETURNING has
 * no order of its own (SQLite answered in its scan order, PostgreSQL was sorted), so
 * listeners and SSE saw the runs end in a different order per backend.
 */
export function inTerminalOrder<T extends { run_id: string }>(rows: T[]): T[] {
  return rows.sort((a, b) => (a.run_id < b.run_id ? -1 : a.run_id > b.run_id ? 1 : 0));
}

export function cancelError(reason: string | null): RunError {
  return { code: 'CANCELLED', message: reason ?? 'the run was cancelled' };
}
