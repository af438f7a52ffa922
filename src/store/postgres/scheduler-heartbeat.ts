// The scheduler's heartbeat row and what the no-scheduler warning reads (the enabled
// schedules now due). Same layout as the SQLite backend; only the SQL differs.

import type { SchedulerStatus } from '../store.ts';
import type { PgContext } from './context.ts';

export async function recordSchedulerBeat(ctx: PgContext, holder: string): Promise<void> {
  await ctx.write(async (tx) => {
    await tx.count(
      `INSERT INTO scheduler_heartbeat (id, holder, beat_at) VALUES (1, $1, $2)
       ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, beat_at = excluded.beat_at`,
      [holder, tx.now],
    );
  });
}

export async function schedulerStatus(ctx: PgContext): Promise<SchedulerStatus> {
  const now = await ctx.now();
  const beat = await ctx.read.one<{ beat_at: number }>(
    'SELECT beat_at FROM scheduler_heartbeat WHERE id = 1',
  );
  const due = await ctx.read.one<{ due: number; oldest: number | null }>(
    `SELECT COUNT(*)::int AS due, MIN(next_fire_at) AS oldest FROM schedules
     WHERE enabled AND next_fire_at IS NOT NULL AND next_fire_at <= $1`,
    [now],
  );
  return {
    now,
    last_beat_at: beat?.beat_at ?? null,
    due: due?.due ?? 0,
    oldest_due_at: due?.oldest ?? null,
  };
}
