// Schedules: the resource, the due lookup and the one-transaction fire. Several
// schedulers may run (one per scheduler process): a fire locks its schedule row and
// re-checks revision + next_fire_at, so only one of them applies a given fire.

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
} from '../store.ts';
import type { PgContext, Sql, SqlParam, Tx } from './context.ts';
import { listByKey } from './keyset.ts';
import { SCHEDULE_LIST } from '../rules/keyset.ts';
import type { ScheduleRow as SharedScheduleRow } from './rows.ts';
import { toSchedule } from './rows.ts';
import { enqueueIn } from './runs.ts';
import { requireTenant } from './guards.ts';
import { resourceChange } from '../rules/resource-changes.ts';

/** This backend's schedule rows (boolean `enabled`). */
type ScheduleRow = SharedScheduleRow & { enabled: boolean };

async function scheduleRow(
  sql: Sql,
  tenant: string,
  name: string,
  lock = false,
): Promise<ScheduleRow | undefined> {
  return sql.one<ScheduleRow>(
    `SELECT * FROM schedules WHERE tenant = $1 AND name = $2${lock ? ' FOR UPDATE' : ''}`,
    [tenant, name],
  );
}

export async function putSchedule(
  ctx: PgContext,
  tenant: string,
  name: string,
  input: ScheduleWrite,
  owner: ScheduleOwner | undefined,
): Promise<{ schedule: Schedule; created: boolean }> {
  return ctx.write(async (tx) => {
    await requireTenant(tx, tenant);
    if (
      !(await tx.one('SELECT 1 FROM agents WHERE tenant = $1 AND name = $2', [tenant, input.agent]))
    ) {
      throw new KeelError('AGENT_NOT_FOUND', `agent ${input.agent} not found`);
    }
    // The name is locked before it is read, so two concurrent creates serialize.
    await tx.one("SELECT pg_advisory_xact_lock(hashtext('schedule:' || $1 || ':' || $2))", [
      tenant,
      name,
    ]);
    const existing = await scheduleRow(tx, tenant, name, true);
    requireOwned(existing, owner, name);
    if (!existing && input.max_schedules !== undefined && input.max_schedules !== null) {
      // One tenant's creates take turns here, so the count stays exact until commit.
      await tx.one("SELECT pg_advisory_xact_lock(hashtext('schedules:' || $1))", [tenant]);
      const counted = await tx.one<{ count: number }>(
        'SELECT count(*)::int AS count FROM (SELECT 1 FROM schedules WHERE tenant = $1 LIMIT $2) AS s',
        [tenant, input.max_schedules],
      );
      if (queueIsFull(counted?.count ?? 0, input.max_schedules)) {
        throw scheduleQuotaError(tenant, input.max_schedules);
      }
    }
    const values: SqlParam[] = [...scheduleValues(input, (on) => on), tenant, name, tx.now];
    const row = existing
      ? await tx.one<ScheduleRow>(
          // A replaced schedule starts over: last_error is cleared, history fields stay.
          `UPDATE schedules SET agent = $1, scope = $2, payload = $3, timing = $4, misfire = $5,
             delivery_destination = $6, enabled = $7, next_fire_at = $8, last_error = NULL,
             revision = revision + 1, updated_at = GREATEST($11, updated_at + 1)
           WHERE tenant = $9 AND name = $10 RETURNING *`,
          values,
        )
      : await tx.one<ScheduleRow>(
          `INSERT INTO schedules (agent, scope, payload, timing, misfire, delivery_destination,
             enabled, next_fire_at, tenant, name, revision, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 1, $11, $11) RETURNING *`,
          values,
        );
    tx.changes.push(resourceChange(tenant, 'schedule', name));
    return { schedule: toSchedule(row as ScheduleRow), created: !existing };
  });
}

export async function getSchedule(
  sql: Sql,
  tenant: string,
  name: string,
): Promise<Schedule | null> {
  const row = await scheduleRow(sql, tenant, name);
  return row ? toSchedule(row) : null;
}

export async function listSchedules(
  sql: Sql,
  tenant: string,
  filter: ScheduleFilter,
  limit: number,
  cursor?: string,
): Promise<Page<Schedule>> {
  const { agent, scope } = filter;
  return listByKey(
    sql,
    { ...SCHEDULE_LIST, tenant, equals: { agent, scope }, limit, cursor },
    toSchedule,
    (row: ScheduleRow) => row.name,
  );
}

export async function deleteSchedule(
  ctx: PgContext,
  tenant: string,
  name: string,
  owner: ScheduleOwner | undefined,
): Promise<boolean> {
  return ctx.write(async (tx) => {
    const row = await scheduleRow(tx, tenant, name, true);
    if (!row || !owns(row, owner)) return false;
    await tx.count('DELETE FROM schedules WHERE tenant = $1 AND name = $2', [tenant, name]);
    tx.changes.push(resourceChange(tenant, 'schedule', name));
    return true;
  });
}

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

/** Inside deleteAgent's transaction: the agent's schedules stop at once. */
export async function disableSchedulesOfAgent(
  tx: Tx,
  tenant: string,
  agent: string,
): Promise<void> {
  await tx.count(
    `UPDATE schedules SET enabled = false, next_fire_at = NULL, last_error = $1,
       revision = revision + 1, updated_at = $2
     WHERE tenant = $3 AND agent = $4 AND enabled`,
    [agentDeletedNote(agent), tx.now, tenant, agent],
  );
}

export async function fireSchedule(
  ctx: PgContext,
  input: ScheduleFireInput,
): Promise<ScheduleFireResult> {
  return ctx.write(async (tx) => {
    const row = await scheduleRow(tx, input.tenant, input.name, true);
    const stale = staleFire(row, row?.enabled === true, input, toSchedule);
    if (stale || !row) return stale as ScheduleFireResult;
    tx.changes.push(resourceChange(input.tenant, 'schedule', input.name));
    const run = input.run;
    if (
      run !== null &&
      !(await tx.one('SELECT 1 FROM agents WHERE tenant = $1 AND name = $2', [
        row.tenant,
        row.agent,
      ]))
    ) {
      const disabled = await tx.one<ScheduleRow>(
        `UPDATE schedules SET enabled = false, next_fire_at = NULL, last_error = $1,
           revision = revision + 1, updated_at = $2 WHERE tenant = $3 AND name = $4 RETURNING *`,
        [agentMissingNote(row.agent), tx.now, row.tenant, row.name],
      );
      ctx.failpoints.hit('schedule.fire.before_commit');
      return {
        outcome: 'agent_missing',
        run: null,
        deduplicated: false,
        schedule: toSchedule(disabled as ScheduleRow),
      };
    }
    let enqueued: EnqueueResult | null = null;
    let note = input.mode === 'due' ? input.note : null;
    try {
      enqueued = run === null ? null : await enqueueIn(tx, run);
    } catch (error) {
      // Refused after its reads only (the count), so the transaction goes on.
      note = queueFullSkipNote(input, error);
      if (note === null) throw error;
    }
    if (enqueued && !enqueued.deduplicated) ctx.failpoints.hit('submit.before_commit');
    let updated: ScheduleRow | undefined;
    if (input.mode === 'due') {
      updated = await tx.one<ScheduleRow>(
        `UPDATE schedules SET next_fire_at = $1, enabled = $2, last_fired_at = $3,
           last_run_id = COALESCE($4, last_run_id), last_error = $5, revision = revision + 1,
           updated_at = $6
         WHERE tenant = $7 AND name = $8 RETURNING *`,
        [
          msOrNull(input.next_fire_at),
          input.next_fire_at !== null,
          enqueued ? tx.now : row.last_fired_at,
          enqueued?.run.run_id ?? null,
          note,
          tx.now,
          input.tenant,
          input.name,
        ],
      );
    } else if (enqueued) {
      updated = await tx.one<ScheduleRow>(
        `UPDATE schedules SET last_fired_at = $1, last_run_id = $2, updated_at = $1
         WHERE tenant = $3 AND name = $4 RETURNING *`,
        [tx.now, enqueued.run.run_id, input.tenant, input.name],
      );
    }
    ctx.failpoints.hit('schedule.fire.before_commit');
    return fireResult(enqueued, toSchedule(updated ?? row));
  });
}
