// Schedules: the resource, the due lookup and the one-transaction fire (enqueue the run
// and advance next_fire_at together, so a crash can neither lose nor double a fire).

import {
  agentDeletedNote,
  agentMissingNote,
  fireResult,
  queueFullSkipNote,
  msOrNull,
  owns,
  requireOwned,
  scheduleValues,
  staleFire,
} from '../rules/schedules.ts';
import { KeelError } from '../../errors.ts';
import { queueIsFull, scheduleQuotaError } from '../rules/tenant-fairness.ts';
import type { Schedule } from '../../types.ts';
import type {
  Page,
  ScheduleFilter,
  EnqueueResult,
  ScheduleFireInput,
  ScheduleFireResult,
  ScheduleOwner,
  ScheduleWrite,
  StoreChange,
} from '../store.ts';
import type { StoreContext } from './context.ts';
import { listByKey } from './keyset.ts';
import { SCHEDULE_LIST } from '../rules/keyset.ts';
import type { ScheduleRow as SharedScheduleRow } from './rows.ts';
import { toSchedule } from './rows.ts';
import { enqueueRun } from './runs.ts';
import { requireTenant } from './guards.ts';
import { resourceChange } from '../rules/resource-changes.ts';

/** This backend's schedule rows (0/1 `enabled`). */
type ScheduleRow = SharedScheduleRow & { enabled: number };

function scheduleRow(ctx: StoreContext, tenant: string, name: string): ScheduleRow | undefined {
  return ctx.sql('SELECT * FROM schedules WHERE tenant = ? AND name = ?').get(tenant, name) as
    ScheduleRow | undefined;
}

export function putSchedule(
  ctx: StoreContext,
  tenant: string,
  name: string,
  input: ScheduleWrite,
  owner: ScheduleOwner | undefined,
): { schedule: Schedule; created: boolean } {
  return ctx.write((changes) => {
    requireTenant(ctx, tenant);
    if (!ctx.sql('SELECT 1 FROM agents WHERE tenant = ? AND name = ?').get(tenant, input.agent)) {
      throw new KeelError('AGENT_NOT_FOUND', `agent ${input.agent} not found`);
    }
    const existing = scheduleRow(ctx, tenant, name);
    requireOwned(existing, owner, name);
    if (!existing && input.max_schedules !== undefined && input.max_schedules !== null) {
      const { count } = ctx
        .sql(
          'SELECT COUNT(*) AS count FROM (SELECT 1 FROM schedules WHERE tenant = ? LIMIT CAST(? AS INTEGER))',
        )
        .get(tenant, input.max_schedules) as { count: number };
      if (queueIsFull(count, input.max_schedules)) {
        throw scheduleQuotaError(tenant, input.max_schedules);
      }
    }
    const now = ctx.now();
    const values = scheduleValues(input, (on) => (on ? 1 : 0));
    if (existing) {
      // A replaced schedule starts over: last_error is cleared, history fields stay.
      ctx
        .sql(
          `UPDATE schedules SET agent = ?, scope = ?, payload = ?, timing = ?, misfire = ?,
             delivery_destination = ?, enabled = ?, next_fire_at = ?, last_error = NULL,
             revision = revision + 1, updated_at = ?
           WHERE tenant = ? AND name = ?`,
        )
        .run(...values, Math.max(now, existing.updated_at + 1), tenant, name);
    } else {
      ctx
        .sql(
          `INSERT INTO schedules (agent, scope, payload, timing, misfire, delivery_destination,
             enabled, next_fire_at, tenant, name, revision, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)`,
        )
        .run(...values, tenant, name, now, now);
    }
    changes.push(resourceChange(tenant, 'schedule', name));
    return {
      schedule: toSchedule(scheduleRow(ctx, tenant, name) as ScheduleRow),
      created: !existing,
    };
  });
}

export function getSchedule(ctx: StoreContext, tenant: string, name: string): Schedule | null {
  const row = scheduleRow(ctx, tenant, name);
  return row ? toSchedule(row) : null;
}

export function listSchedules(
  ctx: StoreContext,
  tenant: string,
  filter: ScheduleFilter,
  limit: number,
  cursor?: string,
): Page<Schedule> {
  const { agent, scope } = filter;
  return listByKey(
    ctx,
    { ...SCHEDULE_LIST, tenant, equals: { agent, scope }, limit, cursor },
    toSchedule,
    (row: ScheduleRow) => row.name,
  );
}

export function deleteSchedule(
  ctx: StoreContext,
  tenant: string,
  name: string,
  owner: ScheduleOwner | undefined,
): boolean {
  return ctx.write((changes) => {
    const row = scheduleRow(ctx, tenant, name);
    if (!row || !owns(row, owner)) return false;
    ctx.sql('DELETE FROM schedules WHERE tenant = ? AND name = ?').run(tenant, name);
    changes.push(resourceChange(tenant, 'schedule', name));
    return true;
  });
}

/**
 * Called inside deleteAgent's transaction: the agent's schedules stop at once instead
 * of failing every tick (docs/http-api.md, agents).
 */
export function disableSchedulesOfAgent(ctx: StoreContext, tenant: string, agent: string): void {
  ctx
    .sql(
      `UPDATE schedules SET enabled = 0, next_fire_at = NULL, last_error = ?,
         revision = revision + 1, updated_at = ?
       WHERE tenant = ? AND agent = ? AND enabled = 1`,
    )
    .run(agentDeletedNote(agent), ctx.now(), tenant, agent);
}

export function dueSchedules(ctx: StoreContext, limit: number): Schedule[] {
  const rows = ctx
    .sql(
      // Round-robin over tenants (src/store/rules/tenant-fairness.ts): each tenant's
      // oldest due schedule, then each tenant's second, and so on.
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

function disableForMissingAgent(ctx: StoreContext, row: ScheduleRow): void {
  ctx
    .sql(
      `UPDATE schedules SET enabled = 0, next_fire_at = NULL, last_error = ?,
         revision = revision + 1, updated_at = ? WHERE tenant = ? AND name = ?`,
    )
    .run(agentMissingNote(row.agent), ctx.now(), row.tenant, row.name);
}

export function fireSchedule(ctx: StoreContext, input: ScheduleFireInput): ScheduleFireResult {
  return ctx.write((changes: StoreChange[]) => {
    const row = scheduleRow(ctx, input.tenant, input.name);
    const stale = staleFire(row, row?.enabled === 1, input, toSchedule);
    if (stale || !row) return stale as ScheduleFireResult;
    changes.push(resourceChange(input.tenant, 'schedule', input.name));
    const run = input.run;
    if (
      run !== null &&
      !ctx.sql('SELECT 1 FROM agents WHERE tenant = ? AND name = ?').get(row.tenant, row.agent)
    ) {
      disableForMissingAgent(ctx, row);
      ctx.failpoints.hit('schedule.fire.before_commit');
      const disabled = toSchedule(scheduleRow(ctx, input.tenant, input.name) as ScheduleRow);
      return { outcome: 'agent_missing', run: null, deduplicated: false, schedule: disabled };
    }
    const now = ctx.now();
    // Nested: the enqueue becomes a savepoint of this transaction, so the run and the
    // advance commit (or roll back) together. Its change notifications go out when it
    // returns, which is still inside this synchronous transaction: listeners only
    // schedule work, and by the time that work runs the transaction has ended.
    let enqueued: EnqueueResult | null = null;
    let note = input.mode === 'due' ? input.note : null;
    try {
      enqueued = run === null ? null : enqueueRun(ctx, run);
    } catch (error) {
      // The enqueue's savepoint rolled back; the schedule still advances (skipped).
      note = queueFullSkipNote(input, error);
      if (note === null) throw error;
    }
    if (input.mode === 'due') {
      ctx
        .sql(
          `UPDATE schedules SET next_fire_at = ?, enabled = ?, last_fired_at = ?,
             last_run_id = COALESCE(?, last_run_id), last_error = ?, revision = revision + 1,
             updated_at = ?
           WHERE tenant = ? AND name = ?`,
        )
        .run(
          msOrNull(input.next_fire_at),
          input.next_fire_at === null ? 0 : 1,
          enqueued ? now : row.last_fired_at,
          enqueued?.run.run_id ?? null,
          note,
          now,
          input.tenant,
          input.name,
        );
    } else if (enqueued) {
      ctx
        .sql(
          `UPDATE schedules SET last_fired_at = ?, last_run_id = ?, updated_at = ?
           WHERE tenant = ? AND name = ?`,
        )
        .run(now, enqueued.run.run_id, now, input.tenant, input.name);
    }
    ctx.failpoints.hit('schedule.fire.before_commit');
    return fireResult(
      enqueued,
      toSchedule(scheduleRow(ctx, input.tenant, input.name) as ScheduleRow),
    );
  });
}
