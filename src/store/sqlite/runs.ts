// Runs on SQLite: the claim, which keeps every (tenant, agent, scope) lane at one running
// run; the enqueue, reads and listing are shared (../repositories/runs.ts) and driven
// here with SQLite's failpoints.

import * as shared from '../repositories/runs.ts';
import type { ClaimedRun, ClaimOptions, EnqueueResult, EnqueueRunInput } from '../store.ts';
import type { StoreContext } from './context.ts';
import type { AgentRow, RunRow } from './rows.ts';
import { toAgent, toRun } from './rows.ts';
import * as trace from '../repositories/trace.ts';
import { within, write } from './steps.ts';
import { capWhenAloneParam, runningCapParam } from '../rules/tenant-fairness.ts';

function runRow(ctx: StoreContext, runId: string): RunRow | undefined {
  return ctx.sql('SELECT * FROM runs WHERE run_id = ?').get(runId) as RunRow | undefined;
}

/**
 * The enqueue in its own write (a savepoint when a schedule's fire has one open, so a
 * refused enqueue rolls back alone).
 */
export function enqueueRun(ctx: StoreContext, input: EnqueueRunInput): EnqueueResult {
  // The hooks, not a generator around the op: every statement of a generator passes
  // through each one it is nested in (a few µs of an enqueue).
  const result = write(ctx, (tx) =>
    shared.enqueueRun(tx, input, {
      beforeCommit: () => ctx.failpoints.hit('submit.before_commit'),
    }),
  );
  if (!result.deduplicated) ctx.afterCommit(() => ctx.failpoints.hit('submit.after_commit'));
  return result;
}

// The fair pick (src/store/rules/tenant-fairness.ts): per tenant under its running cap
// (or any tenant, when it is the only one and the cap is the default), its oldest
// queued run whose lane has nobody running; of those, the tenant with the
// fewest running runs wins, then the oldest. Walking a tenant's queue in FIFO order makes
// the first hit of a lane its oldest queued run (FIFO within the scope), and a busy
// lane's waiting runs are skipped rather than blocking the scan, so an idle lane is
// never starved. Costs per tenant one seek into its queue plus one per skipped run, and
// one into its running runs (the lane index holds exactly those), so the counts read
// only running runs. Counted per tenant rather than grouped in a subquery and joined:
// that join makes SQLite build a temporary table and an index on it at every claim,
// ten times the cost of the rest (bench/overhead).
const NEXT_QUEUED = `
  WITH heads AS (
    SELECT t.name AS tenant,
      (SELECT COUNT(*) FROM runs x INDEXED BY runs_one_running_per_lane
       WHERE x.tenant = t.name AND x.status = 'running') AS running,
      (SELECT r.queue_pos FROM runs r INDEXED BY runs_queued_by_tenant
       WHERE r.tenant = t.name AND r.status = 'queued'
         AND NOT EXISTS (SELECT 1 FROM runs x WHERE x.tenant = r.tenant AND x.agent = r.agent
                         AND x.scope = r.scope AND x.status IN ('running', 'waiting'))
       ORDER BY r.queue_pos LIMIT 1) AS queue_pos
    FROM tenants t
  )
  SELECT r.queue_pos, r.run_id FROM heads h JOIN runs r ON r.queue_pos = h.queue_pos
  WHERE h.running < ?
    OR (? = 0 AND NOT EXISTS (SELECT 1 FROM tenants o WHERE o.name <> h.tenant))
  ORDER BY h.running, h.queue_pos LIMIT 1`;

// A running run whose lease expired keeps its lane and is taken over (attempt + 1).
const NEXT_EXPIRED = `
  SELECT queue_pos, run_id FROM runs INDEXED BY runs_leases
  WHERE status = 'running' AND lease_expires_at <= ?
  ORDER BY queue_pos LIMIT 1`;

interface Candidate {
  queue_pos: number;
  run_id: string;
}

class LaneTaken extends Error {}

function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

export function claimNextRun(ctx: StoreContext, options: ClaimOptions): ClaimedRun | null {
  let claimed: ClaimedRun | null;
  try {
    claimed = ctx.write((changes) => {
      const now = ctx.now();
      const queued = ctx
        .sql(NEXT_QUEUED)
        .get(
          runningCapParam(options.max_running_per_tenant),
          capWhenAloneParam(options.running_cap_when_alone),
        ) as Candidate | undefined;
      const expired = ctx.sql(NEXT_EXPIRED).get(now) as Candidate | undefined;
      const pick =
        queued && expired
          ? queued.queue_pos < expired.queue_pos
            ? queued
            : expired
          : (queued ?? expired);
      if (!pick) return null;
      try {
        ctx
          .sql(
            `UPDATE runs SET status = 'running', attempt = attempt + 1, lease_owner = ?,
               lease_expires_at = ?, started_at = COALESCE(started_at, ?)
             WHERE run_id = ? AND (status = 'queued' OR (status = 'running' AND lease_expires_at <= ?))`,
          )
          .run(options.owner, now + options.lease_ms, now, pick.run_id, now);
      } catch (error) {
        // The partial unique index caught a second running run in the lane: the query
        // above was wrong, but the invariant holds and nothing is claimed.
        if (isUniqueViolation(error)) throw new LaneTaken();
        throw error;
      }
      const row = runRow(ctx, pick.run_id) as RunRow;
      const claimed = { attempt: row.attempt, worker: options.owner };
      within(ctx, (tx) => trace.appendEvent(tx, row, 'run.claimed', claimed), { now, changes });
      const agent = ctx
        .sql('SELECT * FROM agents WHERE tenant = ? AND name = ?')
        .get(row.tenant, row.agent) as AgentRow | undefined;
      return {
        run: toRun(row),
        agent: agent ? toAgent(agent) : null,
        elapsed_ms: row.elapsed_ms,
      };
    });
  } catch (error) {
    if (error instanceof LaneTaken) return null;
    throw error;
  }
  if (claimed) ctx.afterCommit(() => ctx.failpoints.hit('claim.after_commit'));
  return claimed;
}
