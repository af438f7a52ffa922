// Deleting a row a tenant named (src/store/rules/named-rows.ts): one write each.

import type { NamedRowTable } from '../rules/named-rows.ts';
import { resourceChange } from '../rules/resource-changes.ts';
import type { ChangedResource } from '../store.ts';
import type { PgContext } from './context.ts';

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
