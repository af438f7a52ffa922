// Deleting a row a tenant named (src/store/rules/named-rows.ts): one write each.

import type { NamedRowTable } from '../rules/named-rows.ts';
import type { PgContext } from './context.ts';

/** True when the row existed. */
export async function deleteNamedRow(
  ctx: PgContext,
  table: NamedRowTable,
  tenant: string,
  name: string,
): Promise<boolean> {
  return ctx.write(
    async (tx) =>
      (await tx.count(`DELETE FROM ${table} WHERE tenant = $1 AND name = $2`, [tenant, name])) > 0,
  );
}
