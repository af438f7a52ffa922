// Rows a tenant names (src/store/rules/named-rows.ts): the count quota a create answers
// to, and deleting one (one write each).

import type { CountedTable, NamedRowTable } from '../rules/named-rows.ts';
import { QUOTA_OF_TABLE } from '../rules/named-rows.ts';
import { countQuotaError, queueIsFull } from '../rules/tenant-fairness.ts';
import { resourceChange } from '../rules/resource-changes.ts';
import type { ChangedResource } from '../store.ts';
import type { PgContext, Tx } from './context.ts';

/** True when the row existed; announced as `resource` when one is given. */
export async function deleteNamedRow(
  ctx: PgContext,
  table: NamedRowTable,
  tenant: string,
  name: string,
  resource?: ChangedResource,
): Promise<boolean> {
  return ctx.write(async (tx) => {
    const deleted =
      (await tx.count(`DELETE FROM ${table} WHERE tenant = $1 AND name = $2`, [tenant, name])) > 0;
    if (deleted && resource) tx.changes.push(resourceChange(tenant, resource, name));
    return deleted;
  });
}

/**
 * Inside the caller's transaction: throws QUOTA_EXCEEDED when `name` is not yet in
 * `table` and the tenant already holds `limit` rows there (absent: no quota). One
 * tenant's creates in `table` take turns from here to commit (an advisory lock), so the
 * count stays exact; the name is read after the lock, so a racing create of the same
 * name is seen as a replace.
 */
export async function refuseCreatePastQuota(
  tx: Tx,
  table: CountedTable,
  tenant: string,
  name: string,
  limit: number | undefined,
): Promise<void> {
  if (limit === undefined) return;
  await tx.one("SELECT pg_advisory_xact_lock(hashtext($1 || ':' || $2))", [table, tenant]);
  if (await tx.one(`SELECT 1 FROM ${table} WHERE tenant = $1 AND name = $2`, [tenant, name])) {
    return;
  }
  const counted = await tx.one<{ count: number }>(
    `SELECT count(*)::int AS count FROM (SELECT 1 FROM ${table} WHERE tenant = $1 LIMIT $2) AS a`,
    [tenant, limit],
  );
  if (queueIsFull(counted?.count ?? 0, limit)) {
    throw countQuotaError(tenant, limit, QUOTA_OF_TABLE[table]);
  }
}
