// The scheduler's heartbeat row and what the no-scheduler warning reads (the enabled
// schedules now due), for both backends.

import type { SchedulerStatus } from '../store.ts';
import { sql } from '../sql/query.ts';
import type { Op, Reads, Writes } from '../sql/steps.ts';

export function* recordSchedulerBeat(tx: Writes, holder: string): Op<void> {
  yield* tx.run(
    sql`INSERT INTO scheduler_heartbeat (id, holder, beat_at) VALUES (1, ${holder}, ${tx.now})
        ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, beat_at = excluded.beat_at`,
  );
}

/** `now`: the store clock's reading (the database's on PostgreSQL). */
export function* schedulerStatus(db: Reads, now: number): Op<SchedulerStatus> {
  const beat = yield* db.one<{ beat_at: number }>(
    sql`SELECT beat_at FROM scheduler_heartbeat WHERE id = 1`,
  );
  // The partial index of enabled, due schedules (schedules_due) answers this count.
  const due = yield* db.one<{ due: number | string; oldest: number | null }>(
    sql`SELECT COUNT(*) AS due, MIN(next_fire_at) AS oldest FROM schedules
        WHERE ${db.dialect.isTrue(sql`enabled`)} AND next_fire_at IS NOT NULL
          AND next_fire_at <= ${now}`,
  );
  return {
    now,
    last_beat_at: beat?.beat_at ?? null,
    due: Number(due?.due ?? 0),
    oldest_due_at: due?.oldest ?? null,
  };
}
