// The overview's figures from the store's stats, computed in one place: `GET T/overview`
// and `GET /v1/overview` answer them as JSON, and `/metrics` exports the same figures
// as gauges (routes/operations.ts), so the console and a dashboard never disagree.

import type { StoreStats } from '../store/store.ts';

export interface OverviewFigures {
  runs_by_status: StoreStats['runs_by_status'];
  queue_depth: number;
  /** How long the oldest queued run has waited, ms; null when none is queued. */
  oldest_queued_age_ms: number | null;
  deliveries_by_status: StoreStats['deliveries_by_status'];
  deliveries_dead: number;
  /** Schedules whose last fire recorded an error. */
  schedules_failing: number;
}

/** `now` is epoch ms (the process clock: the age is what a person waiting would see). */
export function overviewFigures(stats: StoreStats, now: number): OverviewFigures {
  return {
    runs_by_status: stats.runs_by_status,
    queue_depth: stats.runs_by_status.queued ?? 0,
    oldest_queued_age_ms:
      stats.oldest_queued_ms === null ? null : Math.max(0, now - stats.oldest_queued_ms),
    deliveries_by_status: stats.deliveries_by_status,
    deliveries_dead: stats.deliveries_by_status.dead ?? 0,
    schedules_failing: stats.schedules_failing,
  };
}
