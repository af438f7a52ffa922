// Retention batches (src/store/rules/retention.ts): each one BEGIN IMMEDIATE transaction
// of at most `limit` deleted rows per table, so a turn waits for one short batch at most.
// Deleted pages go to the file's free list and new rows reuse them: the file stops
// growing, it does not shrink (docs/store.md, "Retention").

import type { PruneInput, PruneResult, RetentionCursor } from '../rules/retention.ts';
import {
  JOURNAL_TABLES,
  cursorParams,
  journalBatchOutcome,
  retentionCutoff,
  retentionWalkSql,
  runsBatchOutcome,
} from '../rules/retention.ts';
import type { StoreContext } from './context.ts';

const PLACEHOLDERS = ['?', '?', '?'] as const;

export function pruneRunHistory(ctx: StoreContext, input: PruneInput): PruneResult {
  return ctx.write(() => {
    const cutoff = retentionCutoff(ctx.now(), input.older_than_ms);
    const walk = retentionWalkSql(input.part, PLACEHOLDERS);
    const candidates = ctx
      .sql(`${walk} ORDER BY finished_at, run_id LIMIT CAST(? AS INTEGER)`)
      .all(cutoff, ...cursorParams(input.after), input.limit) as RetentionCursor[];
    const ids = JSON.stringify(candidates.map((candidate) => candidate.run_id));
    if (input.part === 'runs') {
      const deleted = ctx
        .sql('DELETE FROM runs WHERE run_id IN (SELECT value FROM json_each(?))')
        .run(ids).changes;
      return runsBatchOutcome(candidates, deleted, input.limit, input.after);
    }
    const table = JOURNAL_TABLES[input.part];
    // The candidates' rows in walk order, then seq: at the cap, the runs before the last
    // one touched are done (journalBatchOutcome).
    const touched = ctx
      .sql(
        `DELETE FROM ${table} WHERE id IN (
           SELECT t.id FROM json_each(?) c JOIN ${table} t ON t.run_id = c.value
           ORDER BY c.key, t.seq LIMIT CAST(? AS INTEGER))
         RETURNING run_id`,
      )
      .all(ids, input.limit) as { run_id: string }[];
    return journalBatchOutcome(
      candidates,
      touched.map((row) => row.run_id),
      input.limit,
      input.after,
    );
  });
}
