// Existence checks that several repositories start their transactions with.

import { requireTenantFound } from '../rules/tenants.ts';
import type { StoreContext } from './context.ts';
import type { TenantRow } from './rows.ts';

export function tenantRow(ctx: StoreContext, name: string): TenantRow | undefined {
  return ctx.sql('SELECT * FROM tenants WHERE name = ?').get(name) as TenantRow | undefined;
}

/** Checks the tenant exists (the write transaction holds it until the commit). */
export function requireTenant(ctx: StoreContext, name: string): TenantRow {
  return requireTenantFound(tenantRow(ctx, name), name);
}
