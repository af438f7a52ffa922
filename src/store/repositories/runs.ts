// Runs, for both backends: the idempotent enqueue, reading one run, the keyset listing.
// The claim stays per backend (sqlite/runs.ts scans each tenant's queue; postgres/runs.ts
// is one locking UPDATE with SKIP LOCKED). The enqueue is on every turn's path: on SQLite
// it runs inside a group commit, so it issues no statement more than it needs and each
// text is the same at every call.

import type { Run } from '../../types.ts';
import { RUN_LIST } from '../rules/keyset.ts';
import { queuedChange, queuedEventData, refuseBusyLane, requireAgentFound } from '../rules/runs.ts';
import { steerEventData } from '../rules/steering.ts';
import type { RunRow } from '../rows.ts';
import { toRun } from '../rows.ts';
import type { EnqueueResult, EnqueueRunInput, Page, RunFilter } from '../store.ts';
import { sql } from '../sql/query.ts';
import type { Op, Reads, Writes } from '../sql/steps.ts';
import { requireTenant } from './guards.ts';
import { listByKey } from './keyset.ts';
import { insertQueuedRun, requireQueueRoom } from './new-runs.ts';
import { busyLaneAction, markSteer, replayOfRequest } from './steering.ts';
import { appendEvent } from './trace.ts';
import { requireDailyBudget } from './usage.ts';

export function* getRun(db: Reads, tenant: string, runId: string): Op<Run | null> {
  const row = yield* db.one<RunRow>(
    sql`SELECT * FROM runs WHERE run_id = ${runId} AND tenant = ${tenant}`,
  );
  return row ? toRun(row) : null;
}

/** What the enqueue needs of the backend: its failpoint. */
export interface EnqueueHooks {
  /** The `submit.before_commit` failpoint: a new run is written, not yet committed. */
  beforeCommit(): void;
}

/**
 * A turn (or a schedule's fire, inside the fire's transaction) becomes one queued run
 * with its `run.queued` event. A replayed request_id answers the run it made. On
 * PostgreSQL the writes that must not interleave take turns (Dialect.turnsOn): two
 * submits of one request_id, an on_busy=reject check and another enqueue into the lane,
 * two counts of one tenant's queue.
 */
export function* enqueueRun(
  tx: Writes,
  input: EnqueueRunInput,
  hooks: EnqueueHooks,
): Op<EnqueueResult> {
  yield* requireTenant(tx, input.tenant);
  // Looked up before the agent: a replay finds its run even after the agent was deleted.
  const replayed = yield* replayOfRequest(tx, input);
  if (replayed) return replayed;
  const agent = yield* tx.one(
    sql`SELECT 1 FROM agents WHERE tenant = ${input.tenant} AND name = ${input.agent}${tx.dialect.keepsRow}`,
  );
  requireAgentFound(agent, input.agent);
  if (input.on_busy === 'reject') {
    yield* tx.takeTurnOn(`lane:${input.tenant}:${input.agent}:${input.scope}`);
    const busy = yield* tx.one<{ run_id: string }>(
      sql`SELECT run_id FROM runs WHERE tenant = ${input.tenant} AND agent = ${input.agent}
            AND scope = ${input.scope} AND status IN ('queued', 'running', 'waiting') LIMIT 1`,
    );
    refuseBusyLane(busy, input.scope);
  }
  const steerTarget = yield* busyLaneAction(tx, input);
  yield* requireQueueRoom(tx, input.tenant, input.max_queued);
  // A new turn past the tenant's daily budget is refused; a schedule's fire is not (its
  // run stops at its first step boundary).
  if (input.source !== 'schedule') yield* requireDailyBudget(tx, input.tenant);
  const row = yield* insertQueuedRun(tx, input);
  if (steerTarget) yield* markSteer(tx, input.run_id, steerTarget.run_id);
  const data = steerTarget ? steerEventData(input, steerTarget.run_id) : queuedEventData(input);
  yield* appendEvent(tx, input, 'run.queued', data);
  tx.changes.push(queuedChange(input));
  hooks.beforeCommit();
  if (steerTarget) return { run: toRun(steerTarget), deduplicated: false, steer_id: input.run_id };
  return { run: toRun(row), deduplicated: false };
}

export function listRuns(
  db: Reads,
  tenant: string,
  filter: RunFilter,
  limit: number,
  cursor?: string,
): Op<Page<Run>> {
  const { agent, scope, status, source } = filter;
  return listByKey(
    db,
    { ...RUN_LIST, tenant, equals: { agent, scope, status, source }, limit, cursor },
    toRun,
    (row: RunRow) => row.run_id,
  );
}
