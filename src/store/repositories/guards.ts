// Checks that several repositories start their writes with, for both backends.

import { requireTenantFound } from '../rules/tenants.ts';
import type { UsageKind } from '../rules/tenant-usage.ts';
import { exceedsQuota, storageQuotaError } from '../rules/tenant-usage.ts';
import type { TenantRow } from '../rows.ts';
import { raw, sql } from '../sql/query.ts';
import type { Op, Reads, Writes } from '../sql/steps.ts';

export function* tenantRow(db: Reads, name: string): Op<TenantRow | undefined> {
  return yield* db.one<TenantRow>(sql`SELECT * FROM tenants WHERE name = ${name}`);
}

/**
 * Checks the tenant exists and, inside a write, keeps it from being deleted until the
 * commit (Dialect.keepsRow).
 */
export function* requireTenant(tx: Reads, name: string): Op<TenantRow> {
  const row = yield* tx.one<TenantRow>(
    sql`SELECT * FROM tenants WHERE name = ${name}${tx.dialect.keepsRow}`,
  );
  return requireTenantFound(row, name);
}

/**
 * Refuses a write that grows the tenant's `kind` usage past `limit`
 * (src/store/rules/tenant-usage.ts). The tenant's writes take turns from here to the
 * commit (takeUsageTurn), so the usage and the replaced size (`oldBytes`, read after
 * that) stay exact and two racing writes cannot both take the last free bytes.
 */
export function* requireStorageQuota(
  tx: Writes,
  tenant: string,
  kind: UsageKind,
  newBytes: number,
  oldBytes: () => Op<number>,
  limit: number | null | undefined,
): Op<void> {
  if (limit === null || limit === undefined) return;
  yield* takeUsageTurn(tx, tenant);
  yield* refuseStorageGrowth(tx, tenant, kind, newBytes - (yield* oldBytes()), limit);
}

/** The turn a tenant's storage-growing writes take, held until the commit. */
export function takeUsageTurn(tx: Writes, tenant: string): Op<void> {
  return tx.takeTurnOn(`usage:${tenant}`);
}

/** After takeUsageTurn: throws when growing `kind` by `delta` passes `limit`. */
export function* refuseStorageGrowth(
  tx: Writes,
  tenant: string,
  kind: UsageKind,
  delta: number,
  limit: number,
): Op<void> {
  if (delta <= 0) return;
  const row = yield* tx.one<{ used: number | string }>(
    sql`SELECT ${raw(kind)} AS used FROM tenant_usage WHERE tenant = ${tenant}`,
  );
  const used = Number(row?.used ?? 0);
  if (exceedsQuota(used, delta, limit)) throw storageQuotaError(tenant, kind, limit, used, delta);
}
