// SQLite's side of the shared repositories' dialect (../sql/dialect.ts).

import type { Dialect, NumberedInsert } from '../sql/dialect.ts';
import { join, raw, sql } from '../sql/query.ts';
import type { Query, SqlValue } from '../sql/query.ts';

/** One INSERT per row, its seq read from the run's last one by the statement itself. */
function appendNumbered(insert: NumberedInsert): Query[] {
  const names = [...insert.shared.map(([column]) => column), ...insert.columns].join(', ');
  const table = raw(insert.table);
  const nextSeq = sql`(SELECT COALESCE(MAX(seq), 0) + 1 FROM ${table} WHERE run_id = ${insert.runId})`;
  const shared = insert.shared.map(([, value]) => sql`${value}`);
  return insert.rows.map((row) => {
    const values = join([...shared, ...row.map((text) => sql`${text}`)], ', ');
    return sql`INSERT INTO ${table} (run_id, seq, ${raw(names)})
      VALUES (${insert.runId}, ${nextSeq}, ${values}) RETURNING seq`;
  });
}

export const sqliteDialect: Dialect = {
  // The context compiles each distinct text once (StoreContext.sql).
  text: (query: Query) => query.parts.join('?'),
  value(value: SqlValue): unknown {
    if (typeof value === 'boolean') return Number(value);
    return Array.isArray(value) ? JSON.stringify(value) : value;
  },
  greatest: (a, b) => sql`MAX(${a}, ${b})`,
  keepsRow: raw(''),
  locksRow: raw(''),
  turnsOn: () => null,
  inList: (column, values) => sql`${column} IN (SELECT value FROM json_each(${values}))`,
  appendNumbered,
  indexedBy: (index) => raw(` INDEXED BY ${index}`),
};
