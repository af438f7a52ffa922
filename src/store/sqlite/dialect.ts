// SQLite's side of the shared repositories' dialect (../sql/dialect.ts).

import type { Dialect } from '../sql/dialect.ts';
import { raw, sql } from '../sql/query.ts';
import type { Query, SqlValue } from '../sql/query.ts';

export const sqliteDialect: Dialect = {
  // The context compiles each distinct text once (StoreContext.sql).
  text: (query: Query) => query.parts.join('?'),
  value(value: SqlValue): unknown {
    return typeof value === 'boolean' ? Number(value) : value;
  },
  greatest: (a, b) => sql`MAX(${a}, ${b})`,
  keepsRow: raw(''),
  locksRow: raw(''),
  turnsOn: () => null,
  triesTurnOn: () => null,
  orderedTexts: (values) => sql`SELECT value, key AS ord FROM json_each(${JSON.stringify(values)})`,
};
