// A keyset-paged list (../rules/keyset.ts) as a shared repository step.

import type { KeysetList, KeysetValue } from '../rules/keyset.ts';
import { keysetListSql } from '../rules/keyset.ts';
import { pageOf } from '../rows.ts';
import type { Page } from '../store.ts';
import { fromBoundText } from '../sql/query.ts';
import type { Op, Reads } from '../sql/steps.ts';

export function* listByKey<Row, T>(
  db: Reads,
  list: KeysetList,
  toItem: (row: Row) => T,
  keyOf: (row: Row) => string,
): Op<Page<T>> {
  const query = fromBoundText<KeysetValue>((bind) =>
    // CAST: see limitOf in ../sql/query.ts.
    keysetListSql(list, bind, (param) => `CAST(${param} AS INTEGER)`),
  );
  const rows = yield* db.rows<Row>(query);
  return pageOf(rows, list.limit, toItem, (row) => [keyOf(row)]);
}

/** One page of a tenant's rows keyed by their name (agents, webhooks, secrets, …). */
export function listByName<Row extends { name: string }, T>(
  db: Reads,
  list: Omit<KeysetList, 'tenant' | 'limit' | 'cursor'>,
  toItem: (row: Row) => T,
  page: { tenant: string; limit: number; cursor: string | undefined },
): Op<Page<T>> {
  return listByKey(db, { ...list, ...page }, toItem, (row: Row) => row.name);
}
