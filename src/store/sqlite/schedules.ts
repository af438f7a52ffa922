// Schedules on SQLite: the due lookup (a claim), and the fire driven with this
// backend's enqueueRun (its failpoints); the rest of schedules is shared
// (../repositories/schedules.ts).

import type { Schedule } from '../../types.ts';
import * as shared from '../repositories/schedules.ts';
import type { ScheduleFireInput, ScheduleFireResult } from '../store.ts';
import type { StoreContext } from './context.ts';
import { enqueueRun } from './runs.ts';
import { write } from './steps.ts';
import type { ScheduleRow } from '../rows.ts';
import { toSchedule } from '../rows.ts';

export function dueSchedules(ctx: StoreContext, limit: number): Schedule[] {
  const rows = ctx
    .sql(
      // Round-robin over tenants (src/store/rules/tenant-fairness.ts): each tenant's
      // oldest due schedule, then each tenant's second, and so on. INDEXED BY: the
      // partial index of enabled, due schedules.
      `SELECT * FROM (
         SELECT s.*, ROW_NUMBER() OVER (PARTITION BY tenant ORDER BY next_fire_at, name)
           AS tenant_rank
         FROM schedules s INDEXED BY schedules_due
         WHERE enabled = 1 AND next_fire_at IS NOT NULL AND next_fire_at <= ?)
       WHERE tenant_rank <= ?
       ORDER BY tenant_rank, next_fire_at LIMIT CAST(? AS INTEGER)`,
    )
    .all(ctx.now(), limit, limit) as ScheduleRow[];
  return rows.map(toSchedule);
}

/**
 * The fire in one transaction. The enqueue nests a savepoint of it, so the run and the
 * advance commit (or roll back) together; its change notifications go out when it
 * returns, still inside this synchronous transaction: listeners only schedule work,
 * and by the time that work runs the transaction has ended.
 */
export function fireSchedule(ctx: StoreContext, input: ScheduleFireInput): ScheduleFireResult {
  return write(ctx, (tx) =>
    shared.fireSchedule(tx, input, {
      enqueue: (run) => enqueueRun(ctx, run),
      beforeCommit: () => ctx.failpoints.hit('schedule.fire.before_commit'),
    }),
  );
}
