// Rows a tenant names (src/store/rules/named-rows.ts), for both backends: the count
// quota a create answers to, and deleting one.

import type { CountedTable, NamedRowTable } from '../rules/named-rows.ts';
import { QUOTA_OF_TABLE } from '../rules/named-rows.ts';
import { resourceChange } from '../rules/resource-changes.ts';
import { countQuotaError, queueIsFull } from '../rules/tenant-fairness.ts';
import type { ChangedResource } from '../store.ts';
import { limitOf, raw, sql } from '../sql/query.ts';
import type { Op, Writes } from '../sql/steps.ts';

/** True when the row existed; announced as `resource` when one is given. */
export function* deleteNamedRow(
  tx: Writes,
  table: NamedRowTable,
  tenant: string,
  name: string,
  resource?: ChangedResource,
): Op<boolean> {
  const deleted =
    (yield* tx.run(sql`DELETE FROM ${raw(table)} WHERE tenant = ${tenant} AND name = ${name}`)) > 0;
  if (deleted && resource) tx.changes.push(resourceChange(tenant, resource, name));
  return deleted;
}

/**
 * Inside the caller's write: throws QUOTA_EXCEEDED when `name` is not yet in `table` and
 * the tenant already holds `limit` rows there (absent: no quota). One tenant's creates
 * in `table` take turns from here to the commit, so the count stays exact; the name is
 * read after that, so a racing create of the same name is seen as a replace.
 */
export function* refuseCreatePastQuota(
  tx: Writes,
  table: CountedTable,
  tenant: string,
  name: string,
  limit: number | undefined,
): Op<void> {
  if (limit === undefined) return;
  yield* tx.takeTurnOn(`${table}:${tenant}`);
  const from = raw(table);
  if (yield* tx.one(sql`SELECT 1 FROM ${from} WHERE tenant = ${tenant} AND name = ${name}`)) {
    return;
  }
  const counted = yield* tx.one<{ count: number }>(
    sql`SELECT COUNT(*) AS count FROM (SELECT 1 FROM ${from} WHERE tenant = ${tenant} LIMIT ${limitOf(limit)}) AS a`,
  );
  if (queueIsFull(Number(counted?.count ?? 0), limit)) {
    throw countQuotaError(tenant, limit, QUOTA_OF_TABLE[table]);
  }
}
