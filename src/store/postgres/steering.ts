// Steered turns and forks (docs/agent-loop.md), PostgreSQL: the enqueue's part of
// on_busy=steer and on_busy=interrupt, the step boundary's fenced take, and the fork's
// copy of a journal. Exactly-once of a steered turn: it is a queued run row until ONE
// transaction either takes it (DELETE … WHERE status = 'queued', after the fenced
// UPDATE locked the running run) or claims it as the lane's next run. Both change the
// row under its row lock; under READ COMMITTED the loser re-reads the row after the
// winner commits, finds it gone or no longer queued, and skips it.

import { leaseLost } from '../rules/run-writes.ts';
import { newRunValues, queuedChange, replayOf } from '../rules/runs.ts';
import { queueFullError, queueIsFull } from '../rules/tenant-fairness.ts';
import {
  firstUserSeq,
  forkCut,
  forkEventData,
  interruptReason,
  pendingSteerReplay,
  steeredReplay,
  busyLaneDecision,
  LANE_HOLDER_STATUSES,
} from '../rules/steering.ts';
import type { SteerRow } from '../rules/steering.ts';
import type { EntryBody, JsonObject, Run, RunEntry } from '../../types.ts';
import { KeelError } from '../../errors.ts';
import type {
  EnqueueResult,
  EnqueueRunInput,
  Fence,
  ForkRunInput,
  PendingSteer,
} from '../store.ts';
import type { PgContext, Sql, Tx } from './context.ts';
import type { RunRow } from './rows.ts';
import { parseJson, toRun } from './rows.ts';
import { cancelIn } from './run-writes.ts';
import { appendEntries, appendEvent, appendEvents, loadEntries } from './trace.ts';

function runRow(sql: Sql, runId: string): Promise<RunRow | undefined> {
  return sql.one<RunRow>('SELECT * FROM runs WHERE run_id = $1', [runId]);
}

/**
 * The answer to a request_id submitted before (a turn or a fork): its run, or the run it
 * was steered into. undefined: a new request. The advisory lock serializes two submits
 * of one request_id, which a unique index alone cannot answer with the first one's run.
 */
export async function replayOfRequest(
  tx: Tx,
  input: EnqueueRunInput,
): Promise<EnqueueResult | undefined> {
  if (input.request_id === null) return undefined;
  await tx.one("SELECT pg_advisory_xact_lock(hashtext('request:' || $1 || ':' || $2))", [
    input.tenant,
    input.request_id,
  ]);
  const existing = await tx.one<RunRow>(
    'SELECT * FROM runs WHERE tenant = $1 AND request_id = $2',
    [input.tenant, input.request_id],
  );
  if (existing) return (await steerReplay(tx, input, existing)) ?? replayOf(existing, input);
  return await steerReplay(tx, input, undefined);
}

/**
 * A replayed request_id: a turn already taken into a run (run_steers), or a queued row
 * still waiting for its target. undefined: not a steered turn.
 */
export async function steerReplay(
  tx: Tx,
  input: EnqueueRunInput,
  existing: RunRow | undefined,
): Promise<EnqueueResult | undefined> {
  if (existing) {
    const target = existing.steer_target;
    return !target ? undefined : pendingSteerReplay(existing, await runRow(tx, target));
  }
  if (input.request_id === null) return undefined;
  const taken = await tx.one<SteerRow>(
    'SELECT steer_id, run_id, fingerprint FROM run_steers WHERE tenant = $1 AND request_id = $2',
    [input.tenant, input.request_id],
  );
  return taken
    ? steeredReplay(taken, (await runRow(tx, taken.run_id)) as RunRow, input)
    : undefined;
}

/**
 * on_busy steer / interrupt, inside the enqueue's transaction, before the insert:
 * returns the running run a steered turn waits for (null: nothing runs, plain enqueue).
 * interrupt cancels the running run here (its worker stops at the next safe point).
 */
export async function busyLaneAction(tx: Tx, input: EnqueueRunInput): Promise<RunRow | null> {
  if (input.on_busy !== 'steer' && input.on_busy !== 'interrupt') return null;
  const holder = await tx.one<RunRow>(
    `SELECT * FROM runs WHERE tenant = $1 AND agent = $2 AND scope = $3 AND status IN ${LANE_HOLDER_STATUSES}`,
    [input.tenant, input.agent, input.scope],
  );
  const decision = busyLaneDecision(input.on_busy, holder ?? undefined);
  if (decision === 'cancel' && holder) await cancelIn(tx, holder, interruptReason(input.run_id));
  return decision === 'steer' && holder ? holder : null;
}

export async function markSteer(tx: Tx, runId: string, target: string): Promise<void> {
  await tx.count('UPDATE runs SET steer_target = $1 WHERE run_id = $2', [target, runId]);
}

export async function hasPendingSteers(sql: Sql, runId: string): Promise<boolean> {
  const row = await sql.one(
    "SELECT 1 FROM runs WHERE steer_target = $1 AND status = 'queued' LIMIT 1",
    [runId],
  );
  return row !== undefined;
}

type TakenRow = Pick<RunRow, 'run_id' | 'input' | 'request_id' | 'fingerprint' | 'queue_pos'>;

export async function takeSteers(
  ctx: PgContext,
  fence: Fence,
  entryFor: (steer: PendingSteer) => EntryBody,
): Promise<RunEntry[]> {
  return ctx.write(async (tx) => {
    const target = await tx.one<{ tenant: string; run_id: string }>(
      `UPDATE runs SET steps = steps WHERE run_id = $1 AND status = 'running' AND attempt = $2
       RETURNING tenant, run_id`,
      [fence.run_id, fence.attempt],
    );
    if (!target) throw leaseLost(fence);
    // Deleting is the take: a row a claim changed first no longer matches.
    const taken = (
      await tx.rows<TakenRow>(
        `DELETE FROM runs WHERE steer_target = $1 AND status = 'queued'
         RETURNING run_id, input, request_id, fingerprint, queue_pos`,
        [fence.run_id],
      )
    ).sort((a, b) => a.queue_pos - b.queue_pos);
    if (taken.length === 0) return [];
    const bodies = taken.map((row) =>
      entryFor({ steer_id: row.run_id, input: parseJson<JsonObject>(row.input) }),
    );
    const entries = await appendEntries(tx, fence.run_id, fence.attempt, bodies);
    await tx.count(
      `INSERT INTO run_steers (steer_id, tenant, run_id, entry_seq, request_id, fingerprint,
         created_at)
       SELECT s.steer_id, $1, $2, s.entry_seq, s.request_id, s.fingerprint, $3
       FROM unnest($4::text[], $5::int[], $6::text[], $7::text[])
         AS s(steer_id, entry_seq, request_id, fingerprint)`,
      [
        target.tenant,
        fence.run_id,
        tx.now,
        taken.map((row) => row.run_id),
        entries.map((entry) => entry.seq),
        taken.map((row) => row.request_id),
        taken.map((row) => row.fingerprint),
      ],
    );
    await appendEvents(
      tx,
      target,
      taken.map((row, i) => ({
        type: 'run.steered',
        data: { steer_id: row.run_id, entry_seq: entries[i]?.seq ?? null },
      })),
    );
    return entries;
  });
}

/** The tenant's queued-run quota (tenant_limits.queued_runs), checked as an enqueue does. */
async function requireQueueRoom(tx: Tx, tenant: string, maxQueued: number | null): Promise<void> {
  if (maxQueued === null) return;
  // One tenant's enqueues and forks take turns here, so the count stays exact until commit.
  await tx.one("SELECT pg_advisory_xact_lock(hashtext('queued:' || $1))", [tenant]);
  const counted = await tx.one<{ queued: number }>(
    `SELECT count(*)::int AS queued FROM (SELECT 1 FROM runs
       WHERE tenant = $1 AND status = 'queued' LIMIT $2) AS q`,
    [tenant, maxQueued],
  );
  if (queueIsFull(counted?.queued ?? 0, maxQueued)) throw queueFullError(tenant, maxQueued);
}

export async function forkRun(ctx: PgContext, input: ForkRunInput): Promise<Run> {
  return ctx.write(async (tx) => {
    const source = await runRow(tx, input.source_run_id);
    if (!source || source.tenant !== input.tenant) {
      throw new KeelError('RUN_NOT_FOUND', `run ${input.source_run_id} not found`);
    }
    const entries = await loadEntries(tx, source.run_id);
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
    const replayed = await replayOfRequest(tx, enqueue);
    if (replayed) return replayed.run;
    await requireQueueRoom(tx, enqueue.tenant, input.max_queued ?? null);
    const row = (await tx.one<RunRow>(
      `INSERT INTO runs (run_id, tenant, agent, scope, source, input, request_id, fingerprint,
         delivery_destination, status, usage, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'queued', $10, $11) RETURNING *`,
      newRunValues(enqueue, tx.now),
    )) as RunRow;
    // The prefix is copied row for row in SQL: kind and body bytes stay the source's.
    await tx.count(
      `INSERT INTO run_entries (run_id, seq, attempt, kind, body, ts)
       SELECT $1, seq, 0, kind, body, ts FROM run_entries WHERE run_id = $2 AND seq <= $3`,
      [input.run_id, source.run_id, cut],
    );
    const userSeq = firstUserSeq(entries);
    if (input.user_entry && userSeq !== null) {
      await tx.count('UPDATE run_entries SET body = $1 WHERE run_id = $2 AND seq = $3', [
        JSON.stringify(input.user_entry.body),
        input.run_id,
        userSeq,
      ]);
    }
    const data = forkEventData(source.run_id, input.at_step, input.user_entry !== null);
    await appendEvent(tx, enqueue, 'run.queued', data);
    tx.changes.push(queuedChange(enqueue));
    return toRun(row);
  });
}
