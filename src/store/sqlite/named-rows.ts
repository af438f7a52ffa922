// Rows a tenant names (src/store/rules/named-rows.ts): the count quota a create answers
// to, and deleting one (one write each).

import type { CountedTable, NamedRowTable } from '../rules/named-rows.ts';
import { QUOTA_OF_TABLE } from '../rules/named-rows.ts';
import { countQuotaError, queueIsFull } from '../rules/tenant-fairness.ts';
import { resourceChange } from '../rules/resource-changes.ts';
import type { ChangedResource } from '../store.ts';
import type { StoreContext } from './context.ts';

/** True when the row existed; announced as `resource` when one is given. */
export function deleteNamedRow(
  ctx: StoreContext,
  table: NamedRowTable,
  tenant: string,
  name: string,
  resource?: ChangedResource,
): boolean {
  return ctx.write((changes) => {
    const deleted =
      ctx.sql(`DELETE FROM ${table} WHERE tenant = ? AND name = ?`).run(tenant, name).changes > 0;
    if (deleted && resource) changes.push(resourceChange(tenant, resource, name));
    return deleted;
  });
}

/**
 * Inside the caller's write: throws QUOTA_EXCEEDED when `name` is not yet in `table` and
 * the tenant already holds `limit` rows there (absent: no quota). The single writer makes
 * racing creates take turns, so the count is exact.
 */
export function refuseCreatePastQuota(
  ctx: StoreContext,
  table: CountedTable,
  tenant: string,
  name: string,
  limit: number | undefined,
): void {
  if (limit === undefined) return;
  if (ctx.sql(`SELECT 1 FROM ${table} WHERE tenant = ? AND name = ?`).get(tenant, name)) return;
  const { count } = ctx
    .sql(
      `SELECT COUNT(*) AS count FROM (SELECT 1 FROM ${table} WHERE tenant = ? LIMIT CAST(? AS INTEGER))`,
    )
    .get(tenant, limit) as { count: number };
  if (queueIsFull(count, limit)) throw countQuotaError(tenant, limit, QUOTA_OF_TABLE[table]);
}
