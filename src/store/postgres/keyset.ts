// A keyset-paged list on PostgreSQL: the shared SELECT (../rules/keyset.ts) with
// numbered parameters, each bound once however often the SQL names it.

import type { KeysetList } from '../rules/keyset.ts';
import { keysetListSql } from '../rules/keyset.ts';
import type { Page } from '../store.ts';
import type { Sql, SqlParam } from './context.ts';
import { pageOf } from './rows.ts';

export async function listByKey<Row, T>(
  sql: Sql,
  list: KeysetList,
  toItem: (row: Row) => T,
  keyOf: (row: Row) => string,
): Promise<Page<T>> {
  const params: SqlParam[] = [];
  const text = keysetListSql(list, (value) => {
    params.push(value);
    const name = `$${params.length}`;
    return () => name;
  });
  const rows = await sql.rows<Row>(text, params);
  return pageOf(rows, list.limit, toItem, (row) => [keyOf(row)]);
}
