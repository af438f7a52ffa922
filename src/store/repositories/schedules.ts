// Schedules, for both backends: the resource and the one-transaction fire (enqueue the
// run and advance next_fire_at together, so a crash can neither lose nor double a fire).
// Several schedulers may run on PostgreSQL: a fire locks its schedule row
// (Dialect.locksRow) and re-checks revision + next_fire_at (staleFire), so only one of
// them applies a given fire. The due lookup stays per backend (SQLite names its partial
// index, PostgreSQL skips rows a concurrent fire holds).

import { KeelError } from '../../errors.ts';
import type { Schedule } from '../../types.ts';
import type { ScheduleRow } from '../rows.ts';
import { toSchedule } from '../rows.ts';
import { SCHEDULE_LIST } from '../rules/keyset.ts';
import { resourceChange } from '../rules/resource-changes.ts';
import {
  agentDeletedNote,
  agentMissingNote,
  fireResult,
  msOrNull,
  owns,
  queueFullSkipNote,
  requireOwned,
  scheduleValues,
  staleFire,
} from '../rules/schedules.ts';
import type {
  EnqueueResult,
  EnqueueRunInput,
  ScheduleFireInput,
  ScheduleFireResult,
} from '../store.ts';
import type { Page, ScheduleFilter, ScheduleOwner, ScheduleWrite } from '../store.ts';
import { sql } from '../sql/query.ts';
import type { Op, Reads, Writes } from '../sql/steps.ts';
import { requireTenant } from './guards.ts';
import { listByKey } from './keyset.ts';
import { refuseCreatePastQuota } from './named-rows.ts';

function* scheduleRow(db: Reads, tenant: string, name: string): Op<ScheduleRow | undefined> {
  return yield* db.one<ScheduleRow>(
    sql`SELECT * FROM schedules WHERE tenant = ${tenant} AND name = ${name}`,
  );
}

/** Inside a write: the row, which no other writer may change until the commit. */
function* lockedScheduleRow(tx: Writes, tenant: string, name: string): Op<ScheduleRow | undefined> {
  return yield* tx.one<ScheduleRow>(
    sql`SELECT * FROM schedules WHERE tenant = ${tenant} AND name = ${name}${tx.dialect.locksRow}`,
  );
}

function* agentExists(tx: Writes, tenant: string, agent: string): Op<boolean> {
  return (
    (yield* tx.one(sql`SELECT 1 FROM agents WHERE tenant = ${tenant} AND name = ${agent}`)) !==
    undefined
  );
}

export function* putSchedule(
  tx: Writes,
  tenant: string,
  name: string,
  input: ScheduleWrite,
  owner: ScheduleOwner | undefined,
): Op<{ schedule: Schedule; created: boolean }> {
  yield* requireTenant(tx, tenant);
  if (!(yield* agentExists(tx, tenant, input.agent))) {
    throw new KeelError('AGENT_NOT_FOUND', `agent ${input.agent} not found`);
  }
  // The name takes turns before it is read, so two concurrent creates serialize.
  yield* tx.takeTurnOn(`schedule:${tenant}:${name}`);
  const existing = yield* lockedScheduleRow(tx, tenant, name);
  requireOwned(existing, owner, name);
  if (!existing) {
    yield* refuseCreatePastQuota(tx, 'schedules', tenant, name, input.max_schedules ?? undefined);
  }
  const { agent, scope, payload, timing, misfire, destination, enabled, nextFireAt } =
    scheduleValues(input);
  const row = existing
    ? yield* tx.one<ScheduleRow>(
        // A replaced schedule starts over: last_error is cleared, history fields stay.
        sql`UPDATE schedules SET agent = ${agent}, scope = ${scope}, payload = ${payload},
              timing = ${timing}, misfire = ${misfire}, delivery_destination = ${destination},
              enabled = ${enabled}, next_fire_at = ${nextFireAt}, last_error = NULL,
              revision = revision + 1,
              updated_at = ${tx.dialect.greatest(sql`${tx.now}`, sql`updated_at + 1`)}
            WHERE tenant = ${tenant} AND name = ${name} RETURNING *`,
      )
    : yield* tx.one<ScheduleRow>(
        sql`INSERT INTO schedules (agent, scope, payload, timing, misfire, delivery_destination,
              enabled, next_fire_at, tenant, name, revision, created_at, updated_at)
            VALUES (${agent}, ${scope}, ${payload}, ${timing}, ${misfire}, ${destination},
              ${enabled}, ${nextFireAt}, ${tenant}, ${name}, 1, ${tx.now}, ${tx.now})
            RETURNING *`,
      );
  if (!row) throw new Error('schedule row missing after write');
  tx.changes.push(resourceChange(tenant, 'schedule', name));
  return { schedule: toSchedule(row), created: !existing };
}

export function* getSchedule(db: Reads, tenant: string, name: string): Op<Schedule | null> {
  const row = yield* scheduleRow(db, tenant, name);
  return row ? toSchedule(row) : null;
}

export function listSchedules(
  db: Reads,
  tenant: string,
  filter: ScheduleFilter,
  limit: number,
  cursor?: string,
): Op<Page<Schedule>> {
  const { agent, scope } = filter;
  return listByKey(
    db,
    { ...SCHEDULE_LIST, tenant, equals: { agent, scope }, limit, cursor },
    toSchedule,
    (row: ScheduleRow) => row.name,
  );
}

export function* deleteSchedule(
  tx: Writes,
  tenant: string,
  name: string,
  owner: ScheduleOwner | undefined,
): Op<boolean> {
  const row = yield* lockedScheduleRow(tx, tenant, name);
  if (!row || !owns(row, owner)) return false;
  yield* tx.run(sql`DELETE FROM schedules WHERE tenant = ${tenant} AND name = ${name}`);
  tx.changes.push(resourceChange(tenant, 'schedule', name));
  return true;
}

/**
 * Inside deleteAgent's transaction: the agent's schedules stop at once instead of
 * failing every tick (docs/http-api.md, agents).
 */
export function* disableSchedulesOfAgent(tx: Writes, tenant: string, agent: string): Op<void> {
  yield* tx.run(
    sql`UPDATE schedules SET enabled = FALSE, next_fire_at = NULL,
          last_error = ${agentDeletedNote(agent)}, revision = revision + 1, updated_at = ${tx.now}
        WHERE tenant = ${tenant} AND agent = ${agent} AND enabled = TRUE`,
  );
}

/** What a fire needs of the backend: its enqueue (with its failpoints) and a failpoint. */
export interface FireHooks {
  /**
   * Enqueues the fire's run inside the fire's transaction (SQLite: a savepoint of it,
   * rolled back alone when the enqueue is refused; PostgreSQL: refused after its reads
   * only, so the transaction goes on).
   */
  enqueue(run: EnqueueRunInput): EnqueueResult | Promise<EnqueueResult>;
  /** The `schedule.fire.before_commit` failpoint. */
  beforeCommit(): void;
}

export function* fireSchedule(
  tx: Writes,
  input: ScheduleFireInput,
  hooks: FireHooks,
): Op<ScheduleFireResult> {
  const { tenant, name } = input;
  const row = yield* lockedScheduleRow(tx, tenant, name);
  const stale = staleFire(row, row?.enabled === true || row?.enabled === 1, input, toSchedule);
  if (stale || !row) return stale as ScheduleFireResult;
  tx.changes.push(resourceChange(tenant, 'schedule', name));
  const run = input.run;
  if (run !== null && !(yield* agentExists(tx, row.tenant, row.agent))) {
    const disabled = yield* tx.one<ScheduleRow>(
      sql`UPDATE schedules SET enabled = FALSE, next_fire_at = NULL,
            last_error = ${agentMissingNote(row.agent)}, revision = revision + 1,
            updated_at = ${tx.now}
          WHERE tenant = ${tenant} AND name = ${name} RETURNING *`,
    );
    hooks.beforeCommit();
    return {
      outcome: 'agent_missing',
      run: null,
      deduplicated: false,
      schedule: toSchedule(disabled ?? row),
    };
  }
  let enqueued: EnqueueResult | null = null;
  let note = input.mode === 'due' ? input.note : null;
  try {
    enqueued = run === null ? null : yield* tx.call(() => hooks.enqueue(run));
  } catch (error) {
    // The schedule still advances, the fire skipped (a full queue, queueFullSkipNote).
    note = queueFullSkipNote(input, error);
    if (note === null) throw error;
  }
  let updated: ScheduleRow | undefined;
  if (input.mode === 'due') {
    updated = yield* tx.one<ScheduleRow>(
      sql`UPDATE schedules SET next_fire_at = ${msOrNull(input.next_fire_at)},
            enabled = ${input.next_fire_at !== null},
            last_fired_at = ${enqueued ? tx.now : row.last_fired_at},
            last_run_id = COALESCE(${enqueued?.run.run_id ?? null}, last_run_id),
            last_error = ${note}, revision = revision + 1, updated_at = ${tx.now}
          WHERE tenant = ${tenant} AND name = ${name} RETURNING *`,
    );
  } else if (enqueued) {
    updated = yield* tx.one<ScheduleRow>(
      sql`UPDATE schedules SET last_fired_at = ${tx.now}, last_run_id = ${enqueued.run.run_id},
            updated_at = ${tx.now}
          WHERE tenant = ${tenant} AND name = ${name} RETURNING *`,
    );
  }
  hooks.beforeCommit();
  return fireResult(enqueued, toSchedule(updated ?? row));
}
