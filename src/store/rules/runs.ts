// The enqueue rules both backends share: a replayed request_id, a missing agent, a busy
// lane under on_busy=reject, and what a new run row and its queued event hold. Only the
// SQL (and PostgreSQL's advisory locks) differs between backends.

import { KeelError } from '../../errors.ts';
import type { JsonObject } from '../../types.ts';
import { emptyUsage } from '../../types.ts';
import { toRun } from '../rows.ts';
import type { RunRow } from '../rows.ts';
import type { EnqueueResult, EnqueueRunInput, StoreChange } from '../store.ts';

/** A run already made for this request_id: returned as is, unless the request differs. */
export function replayOf(existing: RunRow, input: EnqueueRunInput): EnqueueResult {
  if (existing.fingerprint !== input.fingerprint) {
    throw new KeelError(
      'IDEMPOTENCY_KEY_REUSED',
      `request_id ${input.request_id} was used for a different request (run ${existing.run_id})`,
    );
  }
  return { run: toRun(existing), deduplicated: true };
}

export function requireAgentFound(found: unknown, agent: string): void {
  if (!found) throw new KeelError('AGENT_NOT_FOUND', `agent ${agent} not found`);
}

/** on_busy=reject: refused while the lane has a queued or running run. */
export function refuseBusyLane(busy: { run_id: string } | undefined, scope: string): void {
  if (busy) throw new KeelError('SCOPE_BUSY', `scope ${scope} already has run ${busy.run_id}`);
}

/** run_id … created_at of a new run (newRunValues). */
export type NewRunValues = [
  runId: string,
  tenant: string,
  agent: string,
  scope: string,
  source: string,
  input: string,
  requestId: string | null,
  fingerprint: string,
  destination: string | null,
  usage: string,
  createdAt: number,
];

/**
 * The values of a new queued run, in the column order both backends insert:
 * run_id, tenant, agent, scope, source, input, request_id, fingerprint,
 * delivery_destination, usage, created_at.
 */
export function newRunValues(input: EnqueueRunInput, now: number): NewRunValues {
  return [
    input.run_id,
    input.tenant,
    input.agent,
    input.scope,
    input.source,
    JSON.stringify(input.input),
    input.request_id,
    input.fingerprint,
    input.delivery?.destination ?? null,
    JSON.stringify(emptyUsage()),
    now,
  ];
}

/** The `run.queued` trace event's data. */
export function queuedEventData(input: EnqueueRunInput): JsonObject {
  return { source: input.source, request_id: input.request_id };
}

export function queuedChange(input: EnqueueRunInput): StoreChange {
  return { kind: 'run.queued', tenant: input.tenant, run_id: input.run_id };
}
