// PostgreSQL's side of the shared repositories' dialect (../sql/dialect.ts).

import type { Dialect, NumberedInsert } from '../sql/dialect.ts';
import { join, raw, sql, textCache } from '../sql/query.ts';
import type { SqlValue } from '../sql/query.ts';
import type { Op } from '../sql/steps.ts';

/** All rows in one INSERT … SELECT over unnest(text[]…) WITH ORDINALITY. */
function* appendNumbered(insert: NumberedInsert): Op<number> {
  const { table, shared, columns } = insert.into;
  const names = raw([...shared, ...columns].join(', '));
  const picked = join(
    [
      ...insert.shared.map((value) => sql`${value}`),
      ...columns.map((column) => raw(`e.${column}`)),
    ],
    ', ',
  );
  const lists = join(
    columns.map((_, index) => sql`${insert.rows.map((row) => row[index] ?? '')}::text[]`),
    ', ',
  );
  const query = sql`INSERT INTO ${raw(table)} (run_id, seq, ${names})
      SELECT ${insert.runId}, last.seq + e.n, ${picked}
      FROM (SELECT COALESCE(MAX(seq), 0) AS seq FROM ${raw(table)} WHERE run_id = ${insert.runId}) AS last,
           unnest(${lists}) WITH ORDINALITY AS e(${raw(columns.join(', '))}, n)
      RETURNING seq`;
  // Numbered last + ordinality: the smallest seq is the first row's.
  const rows = (yield { kind: 'rows', query }) as { seq: number }[];
  if (rows.length !== insert.rows.length || rows.length === 0)
    throw new Error(`appended ${rows.length} of ${insert.rows.length} ${table} rows`);
  return rows.reduce((first, row) => Math.min(first, row.seq), Number.POSITIVE_INFINITY);
}

export const postgresDialect: Dialect = {
  // The context prepares each distinct text once per connection (a named statement).
  text: textCache((parts) => parts.reduce((all, part, index) => `${all}$${index}${part}`)),
  value: (value: SqlValue) => value,
  greatest: (a, b) => sql`GREATEST(${a}, ${b})`,
  keepsRow: raw(' FOR SHARE'),
  locksRow: raw(' FOR UPDATE'),
  // hashtext of the key, as keel's statements took it before the port (the same locks).
  turnsOn: (key) => sql`SELECT pg_advisory_xact_lock(hashtext(${key}))`,
  inList: (column, values) => sql`${column} = ANY(${values}::text[])`,
  appendNumbered,
  isTrue: (column) => column,
  indexedBy: () => raw(''),
  jsonText: (document, key) =>
    sql`CASE WHEN jsonb_typeof(${document}::jsonb -> ${raw(`'${key}'`)}) = 'string'
      THEN ${document}::jsonb ->> ${raw(`'${key}'`)} END`,
  skipsLocked: (tables) => raw(` FOR UPDATE OF ${tables.join(', ')} SKIP LOCKED`),
  triesTurnOn: (key) =>
    sql`SELECT pg_try_advisory_xact_lock(hashtext(current_schema() || '.' || ${key})) AS taken`,
  orderedTexts: (values) =>
    sql`SELECT value, ord FROM json_array_elements_text(${JSON.stringify(values)}::json)
          WITH ORDINALITY AS c (value, ord)`,
};
