// Runs on PostgreSQL: the claim — one UPDATE whose CTE picks the oldest claimable run
// with FOR UPDATE SKIP LOCKED, so concurrent claimers in many processes never wait on
// each other and never take the same run. The enqueue, reads and listing are shared
// (../repositories/runs.ts) and driven here with PostgreSQL's failpoints.

import * as shared from '../repositories/runs.ts';
import type { ClaimedRun, ClaimOptions, EnqueueResult, EnqueueRunInput } from '../store.ts';
import type { PgContext, Tx } from './context.ts';
import { isUniqueViolation } from './context.ts';
import type { AgentRow, RunRow } from './rows.ts';
import { toAgent, toRun } from './rows.ts';
import * as trace from '../repositories/trace.ts';
import { within } from './steps.ts';
import { capWhenAloneParam, runningCapParam } from '../rules/tenant-fairness.ts';

/**
 * The enqueue inside the caller's transaction (fireSchedule nests it).
 */
export function enqueueIn(ctx: PgContext, tx: Tx, input: EnqueueRunInput): Promise<EnqueueResult> {
  return within(tx, (writes) =>
    shared.enqueueRun(writes, input, {
      beforeCommit: () => ctx.failpoints.hit('submit.before_commit'),
    }),
  );
}

export async function enqueueRun(ctx: PgContext, input: EnqueueRunInput): Promise<EnqueueResult> {
  const result = await ctx.write((tx) => enqueueIn(ctx, tx, input));
  if (!result.deduplicated) ctx.failpoints.hit('submit.after_commit');
  return result;
}

// The claim, one statement. Candidates:
//   - the fair pick (src/store/rules/tenant-fairness.ts): per tenant under its running
//     cap (or any tenant, when it is the only one and the cap is the default), its oldest queued run that heads its lane (no older queued run in the lane)
//     and whose lane has nobody running; of those, the tenant with the fewest running
//     runs, then the oldest. FIFO per lane, and a busy lane's queue is skipped rather
//     than blocking the scan, so no idle lane starves;
//   - the oldest running run whose lease expired (a reclaim: attempt + 1).
// SKIP LOCKED passes over rows another claimer is taking right now; the UPDATE re-checks
// the row's state. The partial unique index on running runs per lane is the backstop:
// a race the query misses fails the UPDATE, which is reported as "nothing claimed".
// The claim's time ($3, or when null the clock as this statement runs) is read after the
// statement's snapshot, not at BEGIN: a lane's previous run may commit its end between
// this transaction's BEGIN and this statement, and `run.claimed` must not be stamped
// before the end it waited for.
export const CLAIM_SQL = `
WITH clock AS MATERIALIZED (
  SELECT COALESCE($3::bigint, floor(extract(epoch from clock_timestamp()) * 1000)::bigint) AS now
), load AS (
  SELECT tenant, count(*) AS running FROM runs WHERE status = 'running' GROUP BY tenant
), queued AS (
  SELECT h.queue_pos, h.run_id FROM tenants t
  LEFT JOIN load l ON l.tenant = t.name
  CROSS JOIN LATERAL (
    SELECT r.queue_pos, r.run_id FROM runs r
    WHERE r.tenant = t.name AND r.status = 'queued'
      AND NOT EXISTS (SELECT 1 FROM runs x WHERE x.tenant = r.tenant AND x.agent = r.agent
                      AND x.scope = r.scope AND x.status IN ('running', 'waiting'))
      AND NOT EXISTS (SELECT 1 FROM runs y WHERE y.tenant = r.tenant AND y.agent = r.agent
                      AND y.scope = r.scope AND y.status = 'queued' AND y.queue_pos < r.queue_pos)
    ORDER BY r.queue_pos LIMIT 1 FOR UPDATE SKIP LOCKED
  ) AS h
  WHERE COALESCE(l.running, 0) < $4
    OR ($5::int = 0 AND NOT EXISTS (SELECT 1 FROM tenants o WHERE o.name <> t.name))
  ORDER BY COALESCE(l.running, 0), h.queue_pos LIMIT 1
), expired AS (
  SELECT e.queue_pos, e.run_id FROM runs e
  WHERE e.status = 'running' AND e.lease_expires_at <= (SELECT now FROM clock)
  ORDER BY e.queue_pos LIMIT 1 FOR UPDATE SKIP LOCKED
), candidate AS (
  SELECT c.run_id FROM (SELECT * FROM queued UNION ALL SELECT * FROM expired) AS c
  ORDER BY c.queue_pos LIMIT 1
)
UPDATE runs SET status = 'running', attempt = attempt + 1, lease_owner = $1,
  lease_expires_at = clock.now + $2::bigint, started_at = COALESCE(started_at, clock.now)
FROM candidate, clock
WHERE runs.run_id = candidate.run_id
  AND (runs.status = 'queued' OR (runs.status = 'running' AND runs.lease_expires_at <= clock.now))
RETURNING runs.*, clock.now AS claimed_at`;

class LaneTaken extends Error {}

export async function claimNextRun(
  ctx: PgContext,
  options: ClaimOptions,
): Promise<ClaimedRun | null> {
  let claimed: ClaimedRun | null;
  try {
    claimed = await ctx.write(async (tx) => {
      let row: (RunRow & { claimed_at: number }) | undefined;
      try {
        row = await tx.one<RunRow & { claimed_at: number }>(CLAIM_SQL, [
          options.owner,
          options.lease_ms,
          ctx.injectedClock ? tx.now : null,
          runningCapParam(options.max_running_per_tenant),
          capWhenAloneParam(options.running_cap_when_alone),
        ]);
      } catch (error) {
        if (isUniqueViolation(error)) throw new LaneTaken();
        throw error;
      }
      if (!row) return null;
      const claimed = { attempt: row.attempt, worker: options.owner };
      // The event at the claim's own time (the statement's now()), as the row says.
      await within({ ...tx, now: row.claimed_at }, (writes) =>
        trace.appendEvent(writes, row, 'run.claimed', claimed),
      );
      const agent = await tx.one<AgentRow>('SELECT * FROM agents WHERE tenant = $1 AND name = $2', [
        row.tenant,
        row.agent,
      ]);
      return { run: toRun(row), agent: agent ? toAgent(agent) : null, elapsed_ms: row.elapsed_ms };
    });
  } catch (error) {
    if (error instanceof LaneTaken) return null;
    throw error;
  }
  if (claimed) ctx.failpoints.hit('claim.after_commit');
  return claimed;
}
