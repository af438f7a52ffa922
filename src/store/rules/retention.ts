// Retention (docs/store.md, "Retention"): which runs lose their history, and what one
// bounded batch finished. Both backends walk the same plan — the finished runs past the
// cutoff in (finished_at, run_id) order, a batch's deletes capped at `limit` rows — and
// the statements are written once (../repositories/retention.ts).

/**
 * What a pass prunes: a finished run's trace events (`run_events`), its journal entries
 * (`run_entries`), or the run itself (its row, approvals, deliveries and steered turns).
 * Threads, memory, usage and artifacts are never touched.
 */
export const RETENTION_PARTS = ['events', 'entries', 'runs'] as const;
export type RetentionPart = (typeof RETENTION_PARTS)[number];

/**
 * Only a finished run loses anything: a queued, running or waiting (approval) run needs
 * its whole journal to resume, and a terminal status never changes back, so nothing is
 * appended to a run's history once it is past the cutoff.
 */
export const PRUNABLE_STATUSES = ['succeeded', 'failed', 'cancelled'] as const;

/** The table a journal part deletes from. */
export const JOURNAL_TABLES = { events: 'run_events', entries: 'run_entries' } as const;

/** Where a walk over the finished runs stands: the last run it finished with. */
export interface RetentionCursor {
  finished_at: number;
  run_id: string;
}

export interface PruneInput {
  part: RetentionPart;
  /** Runs that finished longer ago than this (by the store's clock) are pruned. */
  older_than_ms: number;
  /** Rows one batch deletes at most (of each table), and runs it looks at. */
  limit: number;
  /** Start after this run; null: from the oldest finished run. */
  after: RetentionCursor | null;
}

export interface PruneResult {
  /** Rows this batch deleted (journal rows, or run rows for `runs`). */
  deleted: number;
  /** The last run whose part this batch finished: the next batch's `after`. */
  last: RetentionCursor | null;
  /** Whether more runs past the cutoff may follow `last`. */
  more: boolean;
  /** PostgreSQL: another process holds the retention lock; this batch did nothing. */
  busy: boolean;
}

export function retentionCutoff(now: number, olderThanMs: number): number {
  return now - olderThanMs;
}

/** A batch that did nothing because another process prunes (PostgreSQL). */
export function busyResult(after: RetentionCursor | null): PruneResult {
  return { deleted: 0, last: after, more: false, busy: true };
}

/**
 * What a journal batch finished. `candidates` are the runs it looked at, in walk order;
 * `touched` the run ids of the rows it deleted (at most `limit`, taken in walk order then
 * seq). Below the cap every candidate is done; at the cap the last run touched may still
 * have rows, so the batch finished only the runs before it.
 */
export function journalBatchOutcome(
  candidates: readonly RetentionCursor[],
  touched: readonly string[],
  limit: number,
  after: RetentionCursor | null,
): PruneResult {
  if (touched.length < limit) {
    return {
      deleted: touched.length,
      last: candidates[candidates.length - 1] ?? after,
      more: candidates.length === limit,
      busy: false,
    };
  }
  const touchedIds = new Set(touched);
  let lastTouched = 0;
  candidates.forEach((candidate, index) => {
    if (touchedIds.has(candidate.run_id)) lastTouched = index;
  });
  return {
    deleted: touched.length,
    last: lastTouched === 0 ? after : (candidates[lastTouched - 1] as RetentionCursor),
    more: true,
    busy: false,
  };
}

/**
 * A `runs` batch: the candidates are runs whose journal is already gone and whose every
 * delivery was delivered (an undelivered or dead one still reads the run's output when
 * it is sent or retried), all deleted.
 */
export function runsBatchOutcome(
  candidates: readonly RetentionCursor[],
  deleted: number,
  limit: number,
  after: RetentionCursor | null,
): PruneResult {
  return {
    deleted,
    last: candidates[candidates.length - 1] ?? after,
    more: candidates.length === limit,
    busy: false,
  };
}

/** The parameters of the walk's "after the cursor" condition: (finished_at, run_id). */
export function cursorParams(after: RetentionCursor | null): [number, string] {
  return after ? [after.finished_at, after.run_id] : [Number.MIN_SAFE_INTEGER, ''];
}

/**
 * The walk over runs a batch may prune: finished runs past the cutoff, after the cursor,
 * oldest first (index runs_finished). For `runs`, a run goes only once its journal is
 * gone and nothing still has to be delivered from it. `params` are the dialect's three
 * placeholders (cutoff, cursor time, cursor run id); only they differ per backend.
 */
export function retentionWalkSql(
  part: RetentionPart,
  params: readonly [string, string, string],
): string {
  const finished = PRUNABLE_STATUSES.map((status) => `'${status}'`).join(', ');
  const walk = `SELECT finished_at, run_id FROM runs
  WHERE finished_at IS NOT NULL AND finished_at < ${params[0]}
    AND (finished_at, run_id) > (${params[1]}, ${params[2]})
    AND status IN (${finished})`;
  if (part !== 'runs') return walk;
  return `${walk}
    AND NOT EXISTS (SELECT 1 FROM run_events e WHERE e.run_id = runs.run_id)
    AND NOT EXISTS (SELECT 1 FROM run_entries n WHERE n.run_id = runs.run_id)
    AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.run_id = runs.run_id
                      AND d.status <> 'delivered')`;
}
