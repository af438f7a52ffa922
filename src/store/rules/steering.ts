// The steering and fork rules both backends share (docs/agent-loop.md, "Steering" and
// "Fork"): what a replayed request_id of a steered turn answers, and where a fork cuts
// the source run's journal. Only the SQL differs between backends.

import { KeelError } from '../../errors.ts';
import type { JsonObject, RunEntry } from '../../types.ts';
import { toRun } from '../rows.ts';
import type { RunRow } from '../rows.ts';
import type { EnqueueResult, EnqueueRunInput } from '../store.ts';

/** The row of a steered turn a running run already took (table run_steers). */
export interface SteerRow {
  steer_id: string;
  run_id: string;
  fingerprint: string;
}

/**
 * A replayed request_id whose turn was steered: the same answer as the first submit
 * (the run that took it, steered), unless the request differs.
 */
export function steeredReplay(
  steer: SteerRow,
  target: RunRow,
  input: EnqueueRunInput,
): EnqueueResult {
  if (steer.fingerprint !== input.fingerprint) {
    throw new KeelError(
      'IDEMPOTENCY_KEY_REUSED',
      `request_id ${input.request_id} was used for a different request (run ${steer.run_id})`,
    );
  }
  return { run: toRun(target), deduplicated: true, steer_id: steer.steer_id };
}

/**
 * A replayed request_id of a turn still waiting to be taken: answered like the first
 * submit while its target still runs; once the target ended the turn is its own run.
 */
export function pendingSteerReplay(existing: RunRow, target: RunRow | undefined): EnqueueResult {
  if (target?.status === 'running' && existing.status === 'queued') {
    return { run: toRun(target), deduplicated: true, steer_id: existing.run_id };
  }
  return { run: toRun(existing), deduplicated: true };
}

/** The queued data of a steered turn: which run it waits for. */
export function steerEventData(input: EnqueueRunInput, target: string): JsonObject {
  return { source: input.source, request_id: input.request_id, steer_target: target };
}

/** The cancel reason an interrupting turn leaves on the run it interrupts. */
export function interruptReason(newRunId: string): string {
  return `interrupted by a new turn (run ${newRunId})`;
}

/**
 * The last seq a fork keeps: the entries before the (at_step + 1)-th assistant entry,
 * i.e. the user entry and the first at_step model steps with their tool results. The
 * cut must leave no call without its result (the fork would have to run it again).
 */
export function forkCut(entries: readonly RunEntry[], atStep: number): number {
  if (entries.length === 0) {
    // A queued run has none yet; a run finished past [retention] entries_days, none left.
    throw new KeelError(
      'VALIDATION_FAILED',
      'at_step: the run has no recorded entries (not yet, or removed by [retention] entries_days)',
    );
  }
  let steps = 0;
  let cut = 0;
  const open = new Set<string>();
  for (const entry of entries) {
    if (entry.kind === 'assistant') {
      if (steps === atStep) break;
      steps += 1;
      for (const call of entry.body.tool_calls) open.add(call.call_id);
    } else if (entry.kind === 'tool_result') open.delete(entry.body.call_id);
    cut = entry.seq;
  }
  if (steps < atStep) {
    throw new KeelError(
      'VALIDATION_FAILED',
      `at_step: the run has ${steps} recorded model step(s), fewer than ${atStep}`,
    );
  }
  if (open.size > 0) {
    throw new KeelError(
      'VALIDATION_FAILED',
      `at_step: step ${atStep} has call(s) without a recorded result (${[...open].join(', ')}); fork at an earlier step`,
    );
  }
  if (!entries.some((entry) => entry.kind === 'user' && entry.seq <= cut)) {
    throw new KeelError('VALIDATION_FAILED', 'at_step: the run has no recorded user entry yet');
  }
  return cut;
}

/** The first user entry's seq: the one a fork's payload replaces. */
export function firstUserSeq(entries: readonly RunEntry[]): number | null {
  return entries.find((entry) => entry.kind === 'user')?.seq ?? null;
}

/** The `run.queued` data of a fork. */
export function forkEventData(source: string, atStep: number, replaced: boolean): JsonObject {
  return { source: 'api', request_id: null, forked_from: source, at_step: atStep, replaced };
}

/**
 * What on_busy steer / interrupt do to the run holding the lane (running, or waiting for
 * an approval): interrupt cancels either; steer joins only a running run — a waiting run
 * takes no turn until a person decides, so the turn queues behind it as the lane's next.
 */
export function busyLaneDecision(
  onBusy: string | undefined,
  holder: { status: string } | undefined,
): 'none' | 'cancel' | 'steer' {
  if (!holder || (onBusy !== 'steer' && onBusy !== 'interrupt')) return 'none';
  if (onBusy === 'interrupt') return 'cancel';
  return holder.status === 'running' ? 'steer' : 'none';
}

/** The lane's holder, read inside the enqueue's transaction. */
export const LANE_HOLDER_STATUSES = "('running', 'waiting')";
