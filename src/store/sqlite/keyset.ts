// A keyset-paged list on SQLite: the shared SELECT (../rules/keyset.ts) with `?`
// parameters, bound once per mention.

import type { KeysetList, KeysetValue } from '../rules/keyset.ts';
import { keysetListSql } from '../rules/keyset.ts';
import type { Page } from '../store.ts';
import type { StoreContext } from './context.ts';
import { pageOf } from './rows.ts';
import { boundLimit } from './statements.ts';

export function listByKey<Row, T>(
  ctx: StoreContext,
  list: KeysetList,
  toItem: (row: Row) => T,
  keyOf: (row: Row) => string,
): Page<T> {
  const params: KeysetValue[] = [];
  const text = keysetListSql(
    list,
    (value) => () => {
      params.push(value);
      return '?';
    },
    boundLimit,
  );
  const rows = ctx.sql(text).all(...params) as Row[];
  return pageOf(rows, list.limit, toItem, (row) => [keyOf(row)]);
}
