// The schedule rules both backends share: who may touch a schedule, how a schedule's
// columns are written, when a fire is stale (someone got there first), and what a fire
// returns (the SQL is shared too: ../repositories/schedules.ts).

import { KeelError } from '../../errors.ts';
import type { EnqueueResult, ScheduleFireInput, ScheduleFireResult } from '../store.ts';
import type { ScheduleOwner, ScheduleWrite } from '../store.ts';
import type { Schedule } from '../../types.ts';
import { isQueueFullError } from './tenant-fairness.ts';

/** The columns these rules read, whatever type the backend gives `enabled`. */
interface ScheduleFacts {
  agent: string;
  scope: string;
  revision: number;
  next_fire_at: number | null;
}

export function msOrNull(text: string | null): number | null {
  return text === null ? null : Date.parse(text);
}

/** Without an owner (the HTTP API) every schedule; a tool only its agent and scope's. */
export function owns(row: ScheduleFacts, owner: ScheduleOwner | undefined): boolean {
  return owner === undefined || (row.agent === owner.agent && row.scope === owner.scope);
}

/** Another agent's schedule is reported as missing, so its existence does not leak. */
export function requireOwned(
  existing: ScheduleFacts | undefined,
  owner: ScheduleOwner | undefined,
  name: string,
): void {
  if (existing && !owns(existing, owner)) {
    throw new KeelError('SCHEDULE_NOT_FOUND', `schedule ${name} belongs to another agent or scope`);
  }
}

/** The columns a put writes; the backend's dialect binds `enabled` (SQLite: 0/1). */
export function scheduleValues(input: ScheduleWrite) {
  const { kind: _kind, ...timingFields } = input.timing;
  return {
    agent: input.agent,
    scope: input.scope,
    payload: JSON.stringify(input.payload),
    timing: JSON.stringify({ kind: input.timing.kind, ...timingFields }),
    misfire: input.misfire,
    destination: input.delivery?.destination ?? null,
    enabled: input.enabled,
    nextFireAt: input.enabled ? msOrNull(input.next_fire_at) : null,
  };
}

/**
 * The guard against a second scheduler (or a PUT) that got there first: a due fire was
 * computed from this exact revision and due time, or it is not applied at all. A manual
 * fire of a missing schedule is SCHEDULE_NOT_FOUND. Returns the stale result, or null
 * when the fire goes ahead.
 */
export function staleFire<R extends ScheduleFacts>(
  row: R | undefined,
  enabled: boolean,
  input: ScheduleFireInput,
  toSchedule: (row: R) => Schedule,
): ScheduleFireResult | null {
  if (!row) {
    if (input.mode === 'manual') {
      throw new KeelError('SCHEDULE_NOT_FOUND', `schedule ${input.name} not found`);
    }
    return { outcome: 'stale', run: null, deduplicated: false, schedule: null };
  }
  if (
    input.mode === 'due' &&
    (!enabled ||
      row.revision !== input.revision ||
      row.next_fire_at !== Date.parse(input.expected_next_fire_at))
  ) {
    return { outcome: 'stale', run: null, deduplicated: false, schedule: toSchedule(row) };
  }
  return null;
}

/** last_error of a schedule disabled because its agent is gone at fire time. */
export function agentMissingNote(agent: string): string {
  return `agent ${agent} not found: schedule disabled`;
}

/** last_error of the schedules of a deleted agent. */
export function agentDeletedNote(agent: string): string {
  return `agent ${agent} was deleted`;
}

/**
 * The last_error of a due fire whose run the tenant's full queue refused
 * (tenant_limits.queued_runs), or null when `error` is something else or the fire is
 * manual (POST …/trigger answers 429 instead). Such a fire is skipped, not retried: the
 * schedule advances to its next occurrence as after a misfire, so a full queue never
 * piles up retries that all land the moment it drains.
 */
export function queueFullSkipNote(input: ScheduleFireInput, error: unknown): string | null {
  if (input.mode !== 'due' || !isQueueFullError(error)) return null;
  return `skipped the fire due at ${input.expected_next_fire_at}: the tenant already had ${input.run?.max_queued} queued runs (tenant_limits.queued_runs)`;
}

export function fireResult(enqueued: EnqueueResult | null, schedule: Schedule): ScheduleFireResult {
  return {
    outcome: enqueued ? 'fired' : 'skipped',
    run: enqueued?.run ?? null,
    deduplicated: enqueued?.deduplicated ?? false,
    schedule,
  };
}
