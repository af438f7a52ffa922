// Deleting a row a tenant named (src/store/rules/named-rows.ts): one write each.

import type { NamedRowTable } from '../rules/named-rows.ts';
import type { StoreContext } from './context.ts';

/** True when the row existed. */
export function deleteNamedRow(
  ctx: StoreContext,
  table: NamedRowTable,
  tenant: string,
  name: string,
): boolean {
  return ctx.write(
    () =>
      ctx.sql(`DELETE FROM ${table} WHERE tenant = ? AND name = ?`).run(tenant, name).changes > 0,
  );
}
