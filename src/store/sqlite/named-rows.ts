// Deleting a row a tenant named (src/store/rules/named-rows.ts): one write each.

import type { NamedRowTable } from '../rules/named-rows.ts';
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
