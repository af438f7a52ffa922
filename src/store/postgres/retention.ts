// Retention batches (src/store/rules/retention.ts): each one short transaction of at
// most `limit` deleted rows per table. Several processes may run the pruner; a batch
// first takes a transaction-scoped advisory lock of this schema and does nothing when
// another process holds it, so one prunes at a time. Without it a batch blocked behind
// another's uncommitted deletes would find fewer rows than it looked for and take runs
// with rows left for done (its cursor would pass them). Deleted rows' space is reused
// by new rows once autovacuum has passed; the tables do not shrink (docs/store.md,
// "Retention").

import type { PruneInput, PruneResult, RetentionCursor } from '../rules/retention.ts';
import {
  JOURNAL_TABLES,
  busyResult,
  cursorParams,
  journalBatchOutcome,
  retentionCutoff,
  retentionWalkSql,
  runsBatchOutcome,
} from '../rules/retention.ts';
import type { PgContext } from './context.ts';

const PLACEHOLDERS = ['$1', '$2', '$3'] as const;

interface CursorRow {
  finished_at: string | number;
  run_id: string;
}

export async function pruneRunHistory(ctx: PgContext, input: PruneInput): Promise<PruneResult> {
  return ctx.write(async (tx) => {
    const lock = await tx.one<{ locked: boolean }>(
      `SELECT pg_try_advisory_xact_lock(hashtext(current_schema() || '.keel_retention')) AS locked`,
    );
    if (!lock?.locked) return busyResult(input.after);
    const cutoff = retentionCutoff(tx.now, input.older_than_ms);
    const walk = retentionWalkSql(input.part, PLACEHOLDERS);
    const rows = await tx.rows<CursorRow>(`${walk} ORDER BY finished_at, run_id LIMIT $4`, [
      cutoff,
      ...cursorParams(input.after),
      input.limit,
    ]);
    // bigint columns arrive as strings.
    const candidates: RetentionCursor[] = rows.map((row) => ({
      finished_at: Number(row.finished_at),
      run_id: row.run_id,
    }));
    const ids = candidates.map((candidate) => candidate.run_id);
    if (input.part === 'runs') {
      const deleted = await tx.count('DELETE FROM runs WHERE run_id = ANY($1::text[])', [ids]);
      return runsBatchOutcome(candidates, deleted, input.limit, input.after);
    }
    const table = JOURNAL_TABLES[input.part];
    // The candidates' rows in walk order, then seq: at the cap, the runs before the last
    // one touched are done (journalBatchOutcome).
    const touched = await tx.rows<{ run_id: string }>(
      `DELETE FROM ${table} t USING (
         SELECT v.run_id, v.seq FROM unnest($1::text[]) WITH ORDINALITY c (run_id, ord)
           JOIN ${table} v ON v.run_id = c.run_id
         ORDER BY c.ord, v.seq LIMIT $2) doomed
       WHERE t.run_id = doomed.run_id AND t.seq = doomed.seq
       RETURNING t.run_id`,
      [ids, input.limit],
    );
    return journalBatchOutcome(
      candidates,
      touched.map((row) => row.run_id),
      input.limit,
      input.after,
    );
  });
}
