// SQLite's side of the shared repositories' dialect (../sql/dialect.ts).

import type { Dialect, NumberedInsert, NumberedTable } from '../sql/dialect.ts';
import type { Op } from '../sql/steps.ts';
import { raw, sql, textCache } from '../sql/query.ts';
import type { Query, SqlValue } from '../sql/query.ts';

/**
 * The run's last seq read once, then one INSERT per row with its seq; the statements are
 * built once per table (appends are on every turn's path).
 */
const appendStatements = new WeakMap<NumberedTable, { last: Query; row: readonly string[] }>();

function statementsOf(into: NumberedTable): { last: Query; row: readonly string[] } {
  let statements = appendStatements.get(into);
  if (statements === undefined) {
    const names = [...into.shared, ...into.columns];
    statements = {
      last: {
        parts: Object.freeze([
          `SELECT COALESCE(MAX(seq), 0) AS last FROM ${into.table} WHERE run_id = `,
          '',
        ]),
        values: [],
      },
      row: Object.freeze(
        `INSERT INTO ${into.table} (run_id, seq, ${names.join(', ')})
        VALUES (?, ?, ${names.map(() => '?').join(', ')})`.split('?'),
      ),
    };
    appendStatements.set(into, statements);
  }
  return statements;
}

function* appendNumbered(insert: NumberedInsert): Op<number> {
  const statements = statementsOf(insert.into);
  const query: Query = { parts: statements.last.parts, values: [insert.runId] };
  const { last } = (yield { kind: 'one', query }) as { last: number };
  for (const [index, row] of insert.rows.entries()) {
    const values = [insert.runId, last + 1 + index, ...insert.shared, ...row];
    yield { kind: 'run', query: { parts: statements.row, values } };
  }
  return last + 1;
}

export const sqliteDialect: Dialect = {
  // The context compiles each distinct text once (StoreContext.sql).
  text: textCache((parts) => parts.join('?')),
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
  isTrue: (column) => sql`${column} = 1`,
  indexedBy: (index) => raw(` INDEXED BY ${index}`),
  jsonText: (document, key) =>
    sql`CASE WHEN json_type(${document}, ${raw(`'$.${key}'`)}) = 'text'
      THEN json_extract(${document}, ${raw(`'$.${key}'`)}) END`,
  skipsLocked: () => raw(''),
  triesTurnOn: () => null,
  orderedTexts: (values) => sql`SELECT value, key AS ord FROM json_each(${JSON.stringify(values)})`,
};
