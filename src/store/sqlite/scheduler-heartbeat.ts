// The scheduler's heartbeat row and what the no-scheduler warning reads (the enabled
// schedules now due). Same layout as the PostgreSQL backend; only the SQL differs.

import type { SchedulerStatus } from '../store.ts';
import type { StoreContext } from './context.ts';

export function recordSchedulerBeat(ctx: StoreContext, holder: string): void {
  ctx.write(() => {
    ctx
      .sql(
        `INSERT INTO scheduler_heartbeat (id, holder, beat_at) VALUES (1, ?, ?)
         ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, beat_at = excluded.beat_at`,
      )
      .run(holder, ctx.now());
  });
}

export function schedulerStatus(ctx: StoreContext): SchedulerStatus {
  const now = ctx.now();
  const beat = ctx.sql('SELECT beat_at FROM scheduler_heartbeat WHERE id = 1').get() as
    { beat_at: number } | undefined;
  const due = ctx
    .sql(
      `SELECT COUNT(*) AS due, MIN(next_fire_at) AS oldest FROM schedules INDEXED BY schedules_due
       WHERE enabled = 1 AND next_fire_at IS NOT NULL AND next_fire_at <= ?`,
    )
    .get(now) as { due: number; oldest: number | null };
  return {
    now,
    last_beat_at: beat?.beat_at ?? null,
    due: due.due,
    oldest_due_at: due.oldest,
  };
}
