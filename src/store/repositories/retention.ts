// Retention batches (docs/store.md, "Retention"; the rules: ../rules/retention.ts), for
// both backends: each one short transaction of at most `limit` deleted rows per table,
// so a turn waits for one short batch at most.
//
// Several PostgreSQL processes may run the pruner: a batch first tries the schema's
// retention turn (Dialect.triesTurnOn) and does nothing when another process holds it,
// so one prunes at a time. Without it a batch blocked behind another's uncommitted
// deletes would find fewer rows than it looked for and take runs with rows left for
// done (its cursor would pass them). SQLite's one writer needs no turn.

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
import { fromBoundText, limitOf, raw, sql } from '../sql/query.ts';
import type { Op, Writes } from '../sql/steps.ts';

/** The key of the retention turn (the same lock older keel versions take on PostgreSQL). */
const RETENTION_TURN = 'keel_retention';

export function* pruneRunHistory(tx: Writes, input: PruneInput): Op<PruneResult> {
  const turn = tx.dialect.triesTurnOn(RETENTION_TURN);
  if (turn) {
    const taken = yield* tx.one<{ taken: boolean }>(turn);
    if (!taken?.taken) return busyResult(input.after);
  }
  const cutoff = retentionCutoff(tx.now, input.older_than_ms);
  const [afterTime, afterRun] = cursorParams(input.after);
  const walk = fromBoundText<number | string>((bind) =>
    retentionWalkSql(input.part, [bind(cutoff)(), bind(afterTime)(), bind(afterRun)()]),
  );
  const rows = yield* tx.rows<{ finished_at: number | string; run_id: string }>(
    sql`${walk} ORDER BY finished_at, run_id LIMIT ${limitOf(input.limit)}`,
  );
  // PostgreSQL's bigint columns arrive as strings.
  const candidates: RetentionCursor[] = rows.map((row) => ({
    finished_at: Number(row.finished_at),
    run_id: row.run_id,
  }));
  const walked = tx.dialect.orderedTexts(candidates.map((candidate) => candidate.run_id));
  if (input.part === 'runs') {
    const deleted = yield* tx.run(
      sql`DELETE FROM runs WHERE run_id IN (SELECT value FROM (${walked}) c)`,
    );
    return runsBatchOutcome(candidates, deleted, input.limit, input.after);
  }
  const table = raw(JOURNAL_TABLES[input.part]);
  // The candidates' rows in walk order, then seq: at the cap, the runs before the last
  // one touched are done (journalBatchOutcome). (run_id, seq) is each journal table's
  // key on both backends.
  const touched = yield* tx.rows<{ run_id: string }>(
    sql`DELETE FROM ${table} WHERE (run_id, seq) IN (
          SELECT v.run_id, v.seq FROM (${walked}) c JOIN ${table} v ON v.run_id = c.value
          ORDER BY c.ord, v.seq LIMIT ${limitOf(input.limit)})
        RETURNING run_id`,
  );
  return journalBatchOutcome(
    candidates,
    touched.map((row) => row.run_id),
    input.limit,
    input.after,
  );
}
