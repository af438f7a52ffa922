// Steered turns and forks (docs/agent-loop.md): the enqueue's part of on_busy=steer and
// on_busy=interrupt, the step boundary's fenced take, and the fork's copy of a journal.
// Exactly-once of a steered turn: it is a queued run row until ONE transaction either
// takes it into the running run (deletes the row, journals the entry, records
// run_steers) or claims it as the lane's next run — never both, since each changes
// the row's status from 'queued' and SQLite runs one write transaction at a time.

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
import { parseJson } from '../rows.ts';
import type {
  EnqueueResult,
  EnqueueRunInput,
  Fence,
  ForkRunInput,
  PendingSteer,
  StoreChange,
} from '../store.ts';
import { KeelError } from '../../errors.ts';
import type { StoreContext } from './context.ts';
import type { RunRow } from './rows.ts';
import { toRun } from './rows.ts';
import { cancelIn } from './run-writes.ts';
import { appendEntries, appendEvent, loadEntries } from './trace.ts';

function runRow(ctx: StoreContext, runId: string): RunRow | undefined {
  return ctx.sql('SELECT * FROM runs WHERE run_id = ?').get(runId) as RunRow | undefined;
}

/**
 * The answer to a request_id submitted before (a turn or a fork): its run, or the run it
 * was steered into. undefined: a new request.
 */
export function replayOfRequest(
  ctx: StoreContext,
  input: EnqueueRunInput,
): EnqueueResult | undefined {
  if (input.request_id === null) return undefined;
  const existing = ctx
    .sql('SELECT * FROM runs WHERE tenant = ? AND request_id = ?')
    .get(input.tenant, input.request_id) as RunRow | undefined;
  if (existing) return steerReplay(ctx, input, existing) ?? replayOf(existing, input);
  return steerReplay(ctx, input, undefined);
}

/**
 * A replayed request_id: a turn already taken into a run (run_steers), or a queued row
 * still waiting for its target. undefined: not a steered turn.
 */
export function steerReplay(
  ctx: StoreContext,
  input: EnqueueRunInput,
  existing: RunRow | undefined,
): EnqueueResult | undefined {
  if (existing) {
    const target = existing.steer_target;
    return !target ? undefined : pendingSteerReplay(existing, runRow(ctx, target));
  }
  if (input.request_id === null) return undefined;
  const taken = ctx
    .sql('SELECT steer_id, run_id, fingerprint FROM run_steers WHERE tenant = ? AND request_id = ?')
    .get(input.tenant, input.request_id) as SteerRow | undefined;
  return taken ? steeredReplay(taken, runRow(ctx, taken.run_id) as RunRow, input) : undefined;
}

/**
 * on_busy steer / interrupt, inside the enqueue's transaction, before the insert:
 * returns the running run a steered turn waits for (null: nothing runs, plain enqueue).
 * interrupt cancels the running run here (its worker stops at the next safe point).
 */
export function busyLaneAction(
  ctx: StoreContext,
  changes: StoreChange[],
  input: EnqueueRunInput,
): RunRow | null {
  if (input.on_busy !== 'steer' && input.on_busy !== 'interrupt') return null;
  const holder = ctx
    .sql(
      `SELECT * FROM runs WHERE tenant = ? AND agent = ? AND scope = ? AND status IN ${LANE_HOLDER_STATUSES}`,
    )
    .get(input.tenant, input.agent, input.scope) as RunRow | undefined;
  const decision = busyLaneDecision(input.on_busy, holder);
  if (decision === 'cancel' && holder)
    cancelIn(ctx, changes, holder, interruptReason(input.run_id));
  return decision === 'steer' && holder ? holder : null;
}

export function markSteer(ctx: StoreContext, runId: string, target: string): void {
  ctx.sql('UPDATE runs SET steer_target = ? WHERE run_id = ?').run(target, runId);
}

const PENDING_STEERS = `SELECT run_id, input, request_id, fingerprint FROM runs
  WHERE steer_target = ? AND status = 'queued' ORDER BY queue_pos`;

export function hasPendingSteers(ctx: StoreContext, runId: string): boolean {
  return (
    ctx
      .sql("SELECT 1 FROM runs WHERE steer_target = ? AND status = 'queued' LIMIT 1")
      .get(runId) !== undefined
  );
}

export function takeSteers(
  ctx: StoreContext,
  fence: Fence,
  entryFor: (steer: PendingSteer) => EntryBody,
): RunEntry[] {
  return ctx.write((changes) => {
    const now = ctx.now();
    const target = ctx
      .sql(
        "UPDATE runs SET steps = steps WHERE run_id = ? AND status = 'running' AND attempt = ? RETURNING tenant, run_id",
      )
      .get(fence.run_id, fence.attempt) as { tenant: string; run_id: string } | undefined;
    if (!target) throw leaseLost(fence);
    const pending = ctx.sql(PENDING_STEERS).all(fence.run_id) as Pick<
      RunRow,
      'run_id' | 'input' | 'request_id' | 'fingerprint'
    >[];
    const taken: RunEntry[] = [];
    for (const steer of pending) {
      const body = entryFor({ steer_id: steer.run_id, input: parseJson(steer.input) });
      const [entry] = appendEntries(ctx, fence.run_id, fence.attempt, [body], now);
      if (!entry) continue;
      ctx.sql('DELETE FROM run_events WHERE run_id = ?').run(steer.run_id);
      ctx.sql('DELETE FROM runs WHERE run_id = ?').run(steer.run_id);
      ctx
        .sql(
          `INSERT INTO run_steers (steer_id, tenant, run_id, entry_seq, request_id, fingerprint,
             created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          steer.run_id,
          target.tenant,
          fence.run_id,
          entry.seq,
          steer.request_id,
          steer.fingerprint,
          now,
        );
      appendEvent(
        ctx,
        changes,
        target,
        'run.steered',
        { steer_id: steer.run_id, entry_seq: entry.seq },
        now,
      );
      taken.push(entry);
    }
    return taken;
  });
}

/** The tenant's queued-run quota (tenant_limits.queued_runs), checked as an enqueue does. */
function requireQueueRoom(ctx: StoreContext, tenant: string, maxQueued: number | null): void {
  if (maxQueued === null) return;
  const { queued } = ctx
    .sql(
      `SELECT COUNT(*) AS queued FROM (SELECT 1 FROM runs INDEXED BY runs_queued_by_tenant
         WHERE tenant = ? AND status = 'queued' LIMIT CAST(? AS INTEGER))`,
    )
    .get(tenant, maxQueued) as { queued: number };
  if (queueIsFull(queued, maxQueued)) throw queueFullError(tenant, maxQueued);
}

export function forkRun(ctx: StoreContext, input: ForkRunInput): Run {
  return ctx.write((changes) => {
    const source = runRow(ctx, input.source_run_id);
    if (!source || source.tenant !== input.tenant) {
      throw new KeelError('RUN_NOT_FOUND', `run ${input.source_run_id} not found`);
    }
    const entries = loadEntries(ctx, source.run_id);
    const cut = forkCut(entries, input.at_step);
    const now = ctx.now();
    const runInput = input.payload ?? parseJson<JsonObject>(source.input);
    const enqueue: EnqueueRunInput = {
      run_id: input.run_id,
      tenant: source.tenant,
      agent: source.agent,
      scope: input.scope,
      source: 'api',
      input: runInput,
      request_id: input.request_id ?? null,
      fingerprint: input.fingerprint,
      delivery: null,
      on_busy: 'enqueue',
    };
    // A fork is submitted like a turn: its request_id dedups, the queue quota counts it.
    const replayed = replayOfRequest(ctx, enqueue);
    if (replayed) return replayed.run;
    requireQueueRoom(ctx, enqueue.tenant, input.max_queued ?? null);
    ctx
      .sql(
        `INSERT INTO runs (run_id, tenant, agent, scope, source, input, request_id, fingerprint,
           delivery_destination, status, usage, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?)`,
      )
      .run(newRunValues(enqueue, now));
    // The prefix is copied row for row in SQL: kind and body bytes stay the source's.
    ctx
      .sql(
        `INSERT INTO run_entries (run_id, seq, attempt, kind, body, ts)
         SELECT ?, seq, 0, kind, body, ts FROM run_entries WHERE run_id = ? AND seq <= ?`,
      )
      .run(input.run_id, source.run_id, cut);
    const userSeq = firstUserSeq(entries);
    if (input.user_entry && userSeq !== null) {
      ctx
        .sql('UPDATE run_entries SET body = ? WHERE run_id = ? AND seq = ?')
        .run(JSON.stringify(input.user_entry.body), input.run_id, userSeq);
    }
    const data = forkEventData(source.run_id, input.at_step, input.user_entry !== null);
    appendEvent(ctx, changes, enqueue, 'run.queued', data, now);
    changes.push(queuedChange(enqueue));
    return toRun(runRow(ctx, input.run_id) as RunRow);
  });
}
