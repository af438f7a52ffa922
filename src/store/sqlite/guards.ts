// Existence checks that several repositories start their transactions with.

import { requireTenantFound } from '../rules/tenants.ts';
import type { UsageKind } from '../rules/tenant-usage.ts';
import { exceedsQuota, storageQuotaError } from '../rules/tenant-usage.ts';
import type { StoreContext } from './context.ts';
import type { TenantRow } from './rows.ts';

export function tenantRow(ctx: StoreContext, name: string): TenantRow | undefined {
  return ctx.sql('SELECT * FROM tenants WHERE name = ?').get(name) as TenantRow | undefined;
}

/** Checks the tenant exists (the write transaction holds it until the commit). */
export function requireTenant(ctx: StoreContext, name: string): TenantRow {
  return requireTenantFound(tenantRow(ctx, name), name);
}

/**
 * Refuses a write that grows the tenant's `kind` usage by `delta` past `limit`
 * (src/store/rules/tenant-usage.ts). Inside the write: the single writer keeps the
 * count exact until the commit.
 */
export function requireStorageQuota(
  ctx: StoreContext,
  tenant: string,
  kind: UsageKind,
  delta: number,
  limit: number | null | undefined,
): void {
  if (limit === null || limit === undefined || delta <= 0) return;
  const row = ctx.sql(`SELECT ${kind} AS used FROM tenant_usage WHERE tenant = ?`).get(tenant) as
    { used: number } | undefined;
  const used = row?.used ?? 0;
  if (exceedsQuota(used, delta, limit)) throw storageQuotaError(tenant, kind, limit, used, delta);
}
