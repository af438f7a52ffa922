// "Schedules are due and no scheduler has run": every running scheduler writes a
// heartbeat (scheduler.ts); processes serving the API read it with the due schedules
// and say so loudly — a log line, /readyz detail and the gauge
// keel_schedules_due_without_scheduler. The usual cause is a split deployment started
// without a `--role scheduler` process (docs/scale-out.md, No scheduler running).

import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { SchedulerHeartbeatStore, SchedulerStatus } from '../store/store.ts';

/** How often a running scheduler writes its heartbeat. */
export const SCHEDULER_BEAT_MS = 5_000;
/** A heartbeat older than this means no scheduler is running (three missed beats). */
export const SCHEDULER_STALE_MS = 3 * SCHEDULER_BEAT_MS;
/** A schedule due for less than this may simply wait for the next tick (1 s). */
export const DUE_GRACE_MS = 3_000;
/** How often an API process checks, and re-logs while the warning holds (once a minute). */
const WATCH_EVERY_MS = 10_000;
const RELOG_EVERY_MS = 60_000;

export interface SchedulerWarning {
  /** Enabled schedules overdue. */
  due: number;
  oldest_due_at: string;
  /** null when no scheduler ever ran on this store. */
  last_beat_at: string | null;
  message: string;
}

/** Pure: the warning for one reading of the store, or null when all is well. */
export function schedulerWarning(status: SchedulerStatus): SchedulerWarning | null {
  if (status.due === 0 || status.oldest_due_at === null) return null;
  if (status.now - status.oldest_due_at < DUE_GRACE_MS) return null;
  const beatAge = status.last_beat_at === null ? null : status.now - status.last_beat_at;
  if (beatAge !== null && beatAge <= SCHEDULER_STALE_MS) return null;
  const since =
    beatAge === null
      ? 'no scheduler has ever run on this store'
      : `no scheduler has run for ${Math.round(beatAge / 1000)} s`;
  return {
    due: status.due,
    oldest_due_at: new Date(status.oldest_due_at).toISOString(),
    last_beat_at: status.last_beat_at === null ? null : new Date(status.last_beat_at).toISOString(),
    message: `${status.due} schedule(s) are due and ${since}: start a process with --role scheduler (or --role all)`,
  };
}

export interface SchedulerWatch {
  /** Reads the store once; updates the gauge. */
  check(): Promise<SchedulerWarning | null>;
  start(): void;
  stop(): void;
}

export function createSchedulerWatch(deps: {
  store: Pick<SchedulerHeartbeatStore, 'schedulerStatus'>;
  logger: Pick<Logger, 'warn' | 'info'>;
  metrics: Pick<Metrics, 'schedulesDueWithoutScheduler'>;
  everyMs?: number;
}): SchedulerWatch {
  let timer: NodeJS.Timeout | null = null;
  let warnedAt: number | null = null;

  async function check(): Promise<SchedulerWarning | null> {
    const warning = schedulerWarning(await deps.store.schedulerStatus());
    deps.metrics.schedulesDueWithoutScheduler.set(warning?.due ?? 0);
    return warning;
  }

  async function watchOnce(): Promise<void> {
    const warning = await check();
    const now = Date.now();
    if (warning && (warnedAt === null || now - warnedAt >= RELOG_EVERY_MS)) {
      warnedAt = now;
      deps.logger.warn(
        {
          due: warning.due,
          oldest_due_at: warning.oldest_due_at,
          last_beat_at: warning.last_beat_at,
        },
        `SCHEDULES NOT FIRING: ${warning.message}`,
      );
    } else if (!warning && warnedAt !== null) {
      warnedAt = null;
      deps.logger.info('a scheduler is running again; due schedules fire');
    }
  }

  function arm(): void {
    timer = setTimeout(() => {
      // A store outage is reported by /readyz; the watch simply tries again.
      void watchOnce()
        .catch(() => undefined)
        .finally(() => {
          if (timer !== null) arm();
        });
    }, deps.everyMs ?? WATCH_EVERY_MS);
    timer.unref();
  }

  return {
    check,
    start() {
      if (timer !== null) return;
      arm();
    },
    stop() {
      if (timer !== null) clearTimeout(timer);
      timer = null;
    },
  };
}
