// PostgreSQL's side of the shared repositories' dialect (../sql/dialect.ts).

import type { Dialect } from '../sql/dialect.ts';
import { raw, sql } from '../sql/query.ts';
import type { Query, SqlValue } from '../sql/query.ts';

export const postgresDialect: Dialect = {
  // The context prepares each distinct text once per connection (a named statement).
  text: (query: Query) => query.parts.reduce((all, part, index) => `${all}$${index}${part}`),
  value: (value: SqlValue) => value,
  greatest: (a, b) => sql`GREATEST(${a}, ${b})`,
  keepsRow: raw(' FOR SHARE'),
  locksRow: raw(' FOR UPDATE'),
  // The same keys as the statements still written per backend take (hashtext of the text).
  turnsOn: (key) => sql`SELECT pg_advisory_xact_lock(hashtext(${key}))`,
  triesTurnOn: (key) =>
    sql`SELECT pg_try_advisory_xact_lock(hashtext(current_schema() || '.' || ${key})) AS taken`,
  orderedTexts: (values) =>
    sql`SELECT value, ord FROM json_array_elements_text(${JSON.stringify(values)}::json)
          WITH ORDINALITY AS c (value, ord)`,
};
