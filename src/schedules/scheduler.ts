// The scheduler: one per process. Each tick takes a bounded batch of due schedules
// (an indexed lookup) and fires each in ONE store transaction: enqueue the run with
// request_id `schedule:<name>:<fire time>` and advance next_fire_at. A crash before the
// commit leaves both undone (the next tick fires again, exactly once); two schedulers
// on one store cannot both fire one time, because the transaction re-checks the
// schedule's revision and next_fire_at, and the request_id deduplicates as well.

import type { Logger } from '../logger.ts';
import type {
  EnqueueRunInput,
  ScheduleFireInput,
  ScheduleStore,
  SchedulerHeartbeatStore,
} from '../store/store.ts';

/** A due fire as the scheduler plans it. */
export type DueFire = Extract<ScheduleFireInput, { mode: 'due' }>;
import type { Schedule, ScheduleTiming } from '../types.ts';
import { newRunId } from '../ids.ts';
import { turnFingerprint } from '../runtime/enqueue.ts';
import { SCHEDULER_BEAT_MS } from './scheduler-watch.ts';
import { nextFireAfter } from './timing.ts';

export interface SchedulerOptions {
  store: ScheduleStore;
  /**
   * tenant_limits.queued_runs (null: no limit). A due fire that finds its tenant's queue
   * full enqueues nothing and is skipped (last_error says so); the schedule advances.
   */
  maxQueued: number | null;
  /** Epoch ms; injected so tests move time instead of sleeping. */
  now?: () => number;
  logger?: Pick<Logger, 'warn' | 'error' | 'info'>;
  tickMs?: number;
  /** Due schedules handled per tick (the rest wait for the next one). */
  batchSize?: number;
  /**
   * A fire later than this is a misfire (downtime, not tick jitter): `skip` drops it,
   * `run_once` still runs it once.
   */
  misfireGraceMs?: number;
  /**
   * Where this scheduler says it runs (every SCHEDULER_BEAT_MS, at a tick), so API
   * processes can warn when none does (scheduler-watch.ts). Absent: no heartbeat.
   */
  heartbeat?: { store: Pick<SchedulerHeartbeatStore, 'recordSchedulerBeat'>; holder: string };
}

export interface TickReport {
  due: number;
  fired: number;
  deduplicated: number;
  skipped: number;
  stale: number;
  disabled: number;
  errors: number;
}

export interface Scheduler {
  start(): void;
  /** Stops the timer and waits for a tick in progress. */
  stop(): Promise<void>;
  /** One round (tests call it directly with an injected clock). */
  tick(): Promise<TickReport>;
}

const DEFAULT_TICK_MS = 1000;
const DEFAULT_BATCH_SIZE = 32;
const DEFAULT_MISFIRE_GRACE_MS = 60_000;

function timingOfSchedule(schedule: Schedule): ScheduleTiming {
  if (schedule.cron !== null && schedule.timezone !== null) {
    return { kind: 'cron', cron: schedule.cron, timezone: schedule.timezone };
  }
  if (schedule.every_ms !== null) return { kind: 'every', every_ms: schedule.every_ms };
  return { kind: 'at', at: schedule.at ?? new Date(0).toISOString() };
}

/** The request_id of one fire: the same for every scheduler and every retry of it. */
export function fireRequestId(name: string, fireAt: number): string {
  return `schedule:${name}:${new Date(fireAt).toISOString()}`;
}

/** The run a schedule enqueues; `request_id` makes it idempotent. */
export function scheduleRun(schedule: Schedule, requestId: string | null): EnqueueRunInput {
  const turn = {
    tenant: schedule.tenant,
    agent: schedule.agent,
    scope: schedule.scope,
    payload: schedule.payload,
    delivery: schedule.delivery,
  };
  return {
    run_id: newRunId(),
    ...turn,
    source: 'schedule',
    input: schedule.payload,
    request_id: requestId,
    fingerprint: turnFingerprint(turn),
    on_busy: 'enqueue',
  };
}

/** What one due schedule does at `now`: pure, so every scheduler computes the same. */
export function planFire(
  schedule: Schedule,
  now: number,
  misfireGraceMs: number,
  maxQueued: number | null,
): DueFire {
  const dueAt = Date.parse(schedule.next_fire_at as string);
  const next = nextFireAfter(timingOfSchedule(schedule), Math.max(now, dueAt), dueAt);
  const missed = now - dueAt > misfireGraceMs;
  const skip = missed && schedule.misfire === 'skip';
  return {
    mode: 'due',
    tenant: schedule.tenant,
    name: schedule.name,
    revision: schedule.revision,
    expected_next_fire_at: new Date(dueAt).toISOString(),
    run: skip
      ? null
      : {
          ...scheduleRun(schedule, fireRequestId(schedule.name, dueAt)),
          max_queued: maxQueued,
        },
    next_fire_at: next === null ? null : new Date(next).toISOString(),
    note: skip
      ? `skipped the fire due at ${new Date(dueAt).toISOString()} (misfire = skip, ${now - dueAt} ms late)`
      : null,
  };
}

export function createScheduler(options: SchedulerOptions): Scheduler {
  const now = options.now ?? Date.now;
  const tickMs = options.tickMs ?? DEFAULT_TICK_MS;
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const grace = options.misfireGraceMs ?? DEFAULT_MISFIRE_GRACE_MS;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<TickReport> | null = null;
  let stopped = false;
  let lastBeat: number | null = null;

  async function beat(): Promise<void> {
    const { heartbeat } = options;
    const at = Date.now();
    if (!heartbeat || (lastBeat !== null && at - lastBeat < SCHEDULER_BEAT_MS)) return;
    try {
      await heartbeat.store.recordSchedulerBeat(heartbeat.holder);
      lastBeat = at;
    } catch (error) {
      options.logger?.warn({ err: error }, 'scheduler heartbeat not written; retried next tick');
    }
  }

  async function tickOnce(): Promise<TickReport> {
    await beat();
    const report: TickReport = {
      due: 0,
      fired: 0,
      deduplicated: 0,
      skipped: 0,
      stale: 0,
      disabled: 0,
      errors: 0,
    };
    const due = await options.store.dueSchedules(batchSize);
    report.due = due.length;
    for (const schedule of due) {
      // One schedule's failure is logged and retried next tick; it never stops the batch.
      try {
        const result = await options.store.fireSchedule(
          planFire(schedule, now(), grace, options.maxQueued),
        );
        if (result.outcome === 'fired') {
          if (result.deduplicated) report.deduplicated += 1;
          else report.fired += 1;
        } else if (result.outcome === 'skipped') report.skipped += 1;
        else if (result.outcome === 'stale') report.stale += 1;
        else {
          report.disabled += 1;
          options.logger?.warn(
            { tenant: schedule.tenant, schedule: schedule.name, agent: schedule.agent },
            'schedule disabled: its agent is gone',
          );
        }
      } catch (error) {
        report.errors += 1;
        options.logger?.error(
          { err: error, tenant: schedule.tenant, schedule: schedule.name },
          'schedule fire failed; retried on the next tick',
        );
      }
    }
    return report;
  }

  function tick(): Promise<TickReport> {
    // Ticks never overlap within one scheduler.
    running ??= tickOnce().finally(() => {
      running = null;
    });
    return running;
  }

  function arm(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      void tick()
        .catch((error: unknown) => options.logger?.error({ err: error }, 'scheduler tick failed'))
        .finally(arm);
    }, tickMs);
    timer.unref();
  }

  return {
    start() {
      stopped = false;
      if (timer === null) arm();
    },
    async stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      await running?.catch(() => undefined);
    },
    tick,
  };
}
