// What a turn's enqueue and a fork both do to make a queued run, for both backends: the
// tenant's queued-run quota, checked exactly, and the new row.

import { newRunValues } from '../rules/runs.ts';
import { queueFullError, queueIsFull } from '../rules/tenant-fairness.ts';
import type { RunRow } from '../rows.ts';
import type { EnqueueRunInput } from '../store.ts';
import { limitOf, sql } from '../sql/query.ts';
import type { Op, Writes } from '../sql/steps.ts';

/**
 * The tenant's queued-run quota (tenant_limits.queued_runs). The tenant's enqueues and
 * forks take turns from here to the commit, so the count stays exact until then.
 */
export function* requireQueueRoom(
  tx: Writes,
  tenant: string,
  maxQueued: number | null | undefined,
): Op<void> {
  if (maxQueued === undefined || maxQueued === null) return;
  yield* tx.takeTurnOn(`queued:${tenant}`);
  // Counts at most maxQueued rows: the cost stays flat however long the queue is.
  const counted = yield* tx.one<{ queued: number | string }>(
    sql`SELECT COUNT(*) AS queued FROM (SELECT 1 FROM runs${tx.dialect.indexedBy('runs_queued_by_tenant')}
          WHERE tenant = ${tenant} AND status = 'queued' LIMIT ${limitOf(maxQueued)}) AS q`,
  );
  if (queueIsFull(Number(counted?.queued ?? 0), maxQueued)) {
    throw queueFullError(tenant, maxQueued);
  }
}

/** Inserts the queued run `input` describes; the row as stored. */
export function* insertQueuedRun(tx: Writes, input: EnqueueRunInput): Op<RunRow> {
  // Written out, not joined from the list: the enqueue is on every turn's path.
  const [id, tenant, agent, scope, source, runInput, requestId, fingerprint, to, usage, at] =
    newRunValues(input, tx.now);
  const row = yield* tx.one<RunRow>(
    sql`INSERT INTO runs (run_id, tenant, agent, scope, source, input, request_id, fingerprint,
          delivery_destination, status, usage, created_at)
        VALUES (${id}, ${tenant}, ${agent}, ${scope}, ${source}, ${runInput}, ${requestId},
          ${fingerprint}, ${to}, 'queued', ${usage}, ${at})
        RETURNING *`,
  );
  if (!row) throw new Error('run row missing after insert');
  return row;
}
