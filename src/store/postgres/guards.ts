// Existence checks that several repositories start their transactions with.

import { requireTenantFound } from '../rules/tenants.ts';
import type { Tx } from './context.ts';
import type { TenantRow } from './rows.ts';

/** Checks the tenant exists and keeps it from being deleted until the commit. */
export async function requireTenant(tx: Tx, name: string): Promise<TenantRow> {
  const row = await tx.one<TenantRow>('SELECT * FROM tenants WHERE name = $1 FOR SHARE', [name]);
  return requireTenantFound(row, name);
}
