// PostgreSQL's side of the shared repositories' dialect (../sql/dialect.ts).

import type { Dialect, NumberedInsert } from '../sql/dialect.ts';
import { join, raw, sql } from '../sql/query.ts';
import type { Query, SqlValue } from '../sql/query.ts';

/** All rows in one INSERT … SELECT over unnest(text[]…) WITH ORDINALITY. */
function appendNumbered(insert: NumberedInsert): Query[] {
  if (insert.rows.length === 0) return [];
  const table = raw(insert.table);
  const sharedNames = insert.shared.map(([column]) => column);
  const names = [...sharedNames, ...insert.columns].join(', ');
  const shared = insert.shared.map(([, value]) => sql`${value}`);
  const picked = join([...shared, ...insert.columns.map((column) => raw(`e.${column}`))], ', ');
  const lists = join(
    insert.columns.map((_, index) => sql`${insert.rows.map((row) => row[index] ?? '')}::text[]`),
    ', ',
  );
  return [
    sql`INSERT INTO ${table} (run_id, seq, ${raw(names)})
      SELECT ${insert.runId}, last.seq + e.n, ${picked}
      FROM (SELECT COALESCE(MAX(seq), 0) AS seq FROM ${table} WHERE run_id = ${insert.runId}) AS last,
           unnest(${lists}) WITH ORDINALITY AS e(${raw(insert.columns.join(', '))}, n)
      RETURNING seq`,
  ];
}

export const postgresDialect: Dialect = {
  // The context prepares each distinct text once per connection (a named statement).
  text: (query: Query) => query.parts.reduce((all, part, index) => `${all}$${index}${part}`),
  value: (value: SqlValue) => value,
  greatest: (a, b) => sql`GREATEST(${a}, ${b})`,
  keepsRow: raw(' FOR SHARE'),
  locksRow: raw(' FOR UPDATE'),
  // The same keys as the statements still written per backend take (hashtext of the text).
  turnsOn: (key) => sql`SELECT pg_advisory_xact_lock(hashtext(${key}))`,
  inList: (column, values) => sql`${column} = ANY(${values}::text[])`,
  appendNumbered,
  indexedBy: () => raw(''),
};
