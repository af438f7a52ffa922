// How the shared repositories write "create or replace" as one INSERT … ON CONFLICT …
// DO UPDATE … RETURNING (SQLite ≥ 3.35 and PostgreSQL both take it), and tell a create
// from a replace without PostgreSQL's `xmax = 0`: a replace always moves updated_at
// past its old value (bumpedUpdatedAt), which is never below created_at, so only a row
// just inserted has updated_at = created_at, whatever the clock did.

import { raw, sql } from '../sql/query.ts';
import type { Query } from '../sql/query.ts';
import type { Writes } from '../sql/steps.ts';

/** In DO UPDATE: the transaction's clock, or one past the row's last update if later. */
export function bumpedUpdatedAt(tx: Writes, table: string): Query {
  return tx.dialect.greatest(sql`excluded.updated_at`, sql`${raw(table)}.updated_at + 1`);
}

/** True for a row an upsert inserted (see above). */
export function wasCreated(row: { created_at: number; updated_at: number }): boolean {
  return Number(row.created_at) === Number(row.updated_at);
}
