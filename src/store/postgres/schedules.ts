// Schedules on PostgreSQL: the due lookup (a claim), and the fire driven with this
// backend's enqueueRun (its failpoints); the rest of schedules is shared
// (../repositories/schedules.ts).

import type { Schedule } from '../../types.ts';
import * as shared from '../repositories/schedules.ts';
import type { ScheduleFireInput, ScheduleFireResult } from '../store.ts';
import type { PgContext } from './context.ts';
import { enqueueIn } from './runs.ts';
import { within } from './steps.ts';
import type { ScheduleRow } from '../rows.ts';
import { toSchedule } from '../rows.ts';

/**
 * Due schedules, round-robin over tenants (src/store/rules/tenant-fairness.ts): each
 * tenant's oldest, then each tenant's second, and so on. Rows a concurrent fire holds
 * are skipped (SKIP LOCKED in a read-only statement: only a momentary lock), so
 * schedulers spread the work.
 */
export async function dueSchedules(ctx: PgContext, limit: number): Promise<Schedule[]> {
  const now = await ctx.now();
  const rows = await ctx.read.rows<ScheduleRow>(
    `SELECT s.* FROM schedules s
     JOIN (SELECT tenant, name,
             row_number() OVER (PARTITION BY tenant ORDER BY next_fire_at, name) AS tenant_rank
           FROM schedules
           WHERE enabled AND next_fire_at IS NOT NULL AND next_fire_at <= $1) AS ranked
       ON ranked.tenant = s.tenant AND ranked.name = s.name
     WHERE ranked.tenant_rank <= $2
     ORDER BY ranked.tenant_rank, s.next_fire_at LIMIT $2 FOR UPDATE OF s SKIP LOCKED`,
    [now, limit],
  );
  return rows.map(toSchedule);
}

/** The fire in one transaction, its run enqueued on the same client. */
export function fireSchedule(
  ctx: PgContext,
  input: ScheduleFireInput,
): Promise<ScheduleFireResult> {
  return ctx.write((client) =>
    within(client, (tx) =>
      shared.fireSchedule(tx, input, {
        enqueue: (run) => enqueueIn(ctx, client, run),
        beforeCommit: () => ctx.failpoints.hit('schedule.fire.before_commit'),
      }),
    ),
  );
}
