// Existence checks that several repositories start their transactions with.

import { requireTenantFound } from '../rules/tenants.ts';
import type { UsageKind } from '../rules/tenant-usage.ts';
import { exceedsQuota, storageQuotaError } from '../rules/tenant-usage.ts';
import type { Tx } from './context.ts';
import type { TenantRow } from './rows.ts';

/** Checks the tenant exists and keeps it from being deleted until the commit. */
export async function requireTenant(tx: Tx, name: string): Promise<TenantRow> {
  const row = await tx.one<TenantRow>('SELECT * FROM tenants WHERE name = $1 FOR SHARE', [name]);
  return requireTenantFound(row, name);
}

/**
 * Refuses a write that grows the tenant's `kind` usage past `limit`
 * (src/store/rules/tenant-usage.ts). The tenant's writes take turns on an advisory lock
 * held until the commit, so the usage and the replaced size (`oldBytes`, read after the
 * lock) stay exact and two racing writes cannot both take the last free bytes.
 */
export async function requireStorageQuota(
  tx: Tx,
  tenant: string,
  kind: UsageKind,
  newBytes: number,
  oldBytes: () => Promise<number>,
  limit: number | null | undefined,
): Promise<void> {
  if (limit === null || limit === undefined) return;
  await tx.one("SELECT pg_advisory_xact_lock(hashtext('usage:' || $1))", [tenant]);
  const delta = newBytes - (await oldBytes());
  if (delta <= 0) return;
  const row = await tx.one<{ used: number }>(
    `SELECT ${kind}::float8 AS used FROM tenant_usage WHERE tenant = $1`,
    [tenant],
  );
  const used = row?.used ?? 0;
  if (exceedsQuota(used, delta, limit)) throw storageQuotaError(tenant, kind, limit, used, delta);
}
