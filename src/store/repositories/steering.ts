// Steered turns and forks (docs/agent-loop.md), for both backends: the enqueue's part of
// on_busy=steer and on_busy=interrupt, the step boundary's fenced take, and the fork's
// copy of a journal. Exactly-once of a steered turn: it is a queued run row until ONE
// transaction either takes it (DELETE … WHERE status = 'queued', after the fenced UPDATE
// of the running run) or claims it as the lane's next run, and both change the row's
// status from 'queued'. SQLite runs one write transaction at a time; on PostgreSQL both
// change the row under its row lock, and under READ COMMITTED the loser re-reads the row
// after the winner commits, finds it gone or no longer queued, and skips it.

import { KeelError } from '../../errors.ts';
import type { EntryBody, JsonObject, Run, RunEntry } from '../../types.ts';
import { leaseLost } from '../rules/run-writes.ts';
import { queuedChange, replayOf } from '../rules/runs.ts';
import type { SteerRow } from '../rules/steering.ts';
import {
  busyLaneDecision,
  firstUserSeq,
  forkCut,
  forkEventData,
  interruptReason,
  LANE_HOLDER_STATUSES,
  pendingSteerReplay,
  steeredReplay,
} from '../rules/steering.ts';
import type { RunRow } from '../rows.ts';
import { parseJson, toRun } from '../rows.ts';
import type {
  EnqueueResult,
  EnqueueRunInput,
  Fence,
  ForkRunInput,
  PendingSteer,
} from '../store.ts';
import { raw, sql } from '../sql/query.ts';
import type { Op, Reads, Writes } from '../sql/steps.ts';
import { insertQueuedRun, requireQueueRoom } from './new-runs.ts';
import { cancelIn } from './run-writes.ts';
import { appendEntries, appendEvent, appendEvents, loadEntries } from './trace.ts';

function* runRow(db: Reads, runId: string): Op<RunRow | undefined> {
  return yield* db.one<RunRow>(sql`SELECT * FROM runs WHERE run_id = ${runId}`);
}

/**
 * The answer to a request_id submitted before (a turn or a fork): its run, or the run it
 * was steered into. undefined: a new request. Two submits of one request_id take turns
 * here (a unique index alone cannot answer the second with the first one's run).
 */
export function* replayOfRequest(
  tx: Writes,
  input: EnqueueRunInput,
): Op<EnqueueResult | undefined> {
  if (input.request_id === null) return undefined;
  yield* tx.takeTurnOn(`request:${input.tenant}:${input.request_id}`);
  const existing = yield* tx.one<RunRow>(
    sql`SELECT * FROM runs WHERE tenant = ${input.tenant} AND request_id = ${input.request_id}`,
  );
  if (existing) return (yield* steerReplay(tx, input, existing)) ?? replayOf(existing, input);
  return yield* steerReplay(tx, input, undefined);
}

/**
 * A replayed request_id: a turn already taken into a run (run_steers), or a queued row
 * still waiting for its target. undefined: not a steered turn.
 */
export function* steerReplay(
  tx: Writes,
  input: EnqueueRunInput,
  existing: RunRow | undefined,
): Op<EnqueueResult | undefined> {
  if (existing) {
    const target = existing.steer_target;
    return !target ? undefined : pendingSteerReplay(existing, yield* runRow(tx, target));
  }
  if (input.request_id === null) return undefined;
  const taken = yield* tx.one<SteerRow>(
    sql`SELECT steer_id, run_id, fingerprint FROM run_steers
        WHERE tenant = ${input.tenant} AND request_id = ${input.request_id}`,
  );
  return taken
    ? steeredReplay(taken, (yield* runRow(tx, taken.run_id)) as RunRow, input)
    : undefined;
}

/**
 * on_busy steer / interrupt, inside the enqueue's transaction, before the insert:
 * returns the running run a steered turn waits for (null: nothing runs, plain enqueue).
 * interrupt cancels the running run here (its worker stops at the next safe point).
 */
export function* busyLaneAction(tx: Writes, input: EnqueueRunInput): Op<RunRow | null> {
  if (input.on_busy !== 'steer' && input.on_busy !== 'interrupt') return null;
  const holder = yield* tx.one<RunRow>(
    sql`SELECT * FROM runs WHERE tenant = ${input.tenant} AND agent = ${input.agent}
          AND scope = ${input.scope} AND status IN ${raw(LANE_HOLDER_STATUSES)}`,
  );
  const decision = busyLaneDecision(input.on_busy, holder);
  if (decision === 'cancel' && holder) {
    yield* cancelIn(tx, holder, interruptReason(input.run_id));
  }
  return decision === 'steer' && holder ? holder : null;
}

export function* markSteer(tx: Writes, runId: string, target: string): Op<void> {
  yield* tx.run(sql`UPDATE runs SET steer_target = ${target} WHERE run_id = ${runId}`);
}

export function* hasPendingSteers(db: Reads, runId: string): Op<boolean> {
  const row = yield* db.one(
    sql`SELECT 1 FROM runs WHERE steer_target = ${runId} AND status = 'queued' LIMIT 1`,
  );
  return row !== undefined;
}

type TakenRow = Pick<RunRow, 'run_id' | 'input' | 'request_id' | 'fingerprint' | 'queue_pos'>;

/**
 * At a step boundary: the running run's steered turns, in the order they came, become
 * entries of its journal. The fenced UPDATE first (it row-locks the run on PostgreSQL),
 * then the DELETE is the take: a row a claim changed first no longer matches. The
 * turn's own trace events go with its row (ON DELETE CASCADE).
 */
export function* takeSteers(
  tx: Writes,
  fence: Fence,
  entryFor: (steer: PendingSteer) => EntryBody,
): Op<RunEntry[]> {
  const target = yield* tx.one<{ tenant: string; run_id: string }>(
    sql`UPDATE runs SET steps = steps
        WHERE run_id = ${fence.run_id} AND status = 'running' AND attempt = ${fence.attempt}
        RETURNING tenant, run_id`,
  );
  if (!target) throw leaseLost(fence);
  // Neither backend promises the order of a DELETE's RETURNING rows.
  const taken = (yield* tx.rows<TakenRow>(
    sql`DELETE FROM runs WHERE steer_target = ${fence.run_id} AND status = 'queued'
          RETURNING run_id, input, request_id, fingerprint, queue_pos`,
  )).sort((a, b) => a.queue_pos - b.queue_pos);
  if (taken.length === 0) return [];
  const bodies = taken.map((row) =>
    entryFor({ steer_id: row.run_id, input: parseJson<JsonObject>(row.input) }),
  );
  const entries = yield* appendEntries(tx, fence.run_id, fence.attempt, bodies);
  // One row per taken turn (almost always one: the turns that came during one step).
  for (const [i, row] of taken.entries()) {
    yield* tx.run(
      sql`INSERT INTO run_steers (steer_id, tenant, run_id, entry_seq, request_id, fingerprint,
            created_at)
          VALUES (${row.run_id}, ${target.tenant}, ${fence.run_id}, ${entries[i]?.seq ?? null},
            ${row.request_id}, ${row.fingerprint}, ${tx.now})`,
    );
  }
  yield* appendEvents(
    tx,
    target,
    taken.map((row, i) => ({
      type: 'run.steered',
      data: { steer_id: row.run_id, entry_seq: entries[i]?.seq ?? null },
    })),
  );
  return entries;
}

export function* forkRun(tx: Writes, input: ForkRunInput): Op<Run> {
  const source = yield* runRow(tx, input.source_run_id);
  if (!source || source.tenant !== input.tenant) {
    throw new KeelError('RUN_NOT_FOUND', `run ${input.source_run_id} not found`);
  }
  const entries = yield* loadEntries(tx, source.run_id);
  const cut = forkCut(entries, input.at_step);
  const enqueue: EnqueueRunInput = {
    run_id: input.run_id,
    tenant: source.tenant,
    agent: source.agent,
    scope: input.scope,
    source: 'api',
    input: input.payload ?? parseJson<JsonObject>(source.input),
    request_id: input.request_id ?? null,
    fingerprint: input.fingerprint,
    delivery: null,
    on_busy: 'enqueue',
  };
  // A fork is submitted like a turn: its request_id dedups, the queue quota counts it.
  const replayed = yield* replayOfRequest(tx, enqueue);
  if (replayed) return replayed.run;
  yield* requireQueueRoom(tx, enqueue.tenant, input.max_queued);
  const row = yield* insertQueuedRun(tx, enqueue);
  // The prefix is copied row for row in SQL: kind and body bytes stay the source's.
  yield* tx.run(
    sql`INSERT INTO run_entries (run_id, seq, attempt, kind, body, ts)
        SELECT ${input.run_id}, seq, 0, kind, body, ts FROM run_entries
        WHERE run_id = ${source.run_id} AND seq <= ${cut}`,
  );
  const userSeq = firstUserSeq(entries);
  if (input.user_entry && userSeq !== null) {
    yield* tx.run(
      sql`UPDATE run_entries SET body = ${JSON.stringify(input.user_entry.body)}
          WHERE run_id = ${input.run_id} AND seq = ${userSeq}`,
    );
  }
  const data = forkEventData(source.run_id, input.at_step, input.user_entry !== null);
  yield* appendEvent(tx, enqueue, 'run.queued', data);
  tx.changes.push(queuedChange(enqueue));
  return toRun(row);
}
