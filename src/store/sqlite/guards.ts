// The shared write guards (../repositories/guards.ts) for the repositories still written
// per backend, inside their synchronous write.

import type { UsageKind } from '../rules/tenant-usage.ts';
import * as guards from '../repositories/guards.ts';
import type { StoreChange } from '../store.ts';
import type { StoreContext } from './context.ts';
import type { TenantRow } from './rows.ts';
import { read, within } from './steps.ts';

export function requireTenant(ctx: StoreContext, name: string): TenantRow {
  return read(ctx, (db) => guards.requireTenant(db, name));
}

/** guards.requireStorageQuota, with the replaced size read by `oldBytes` after the turn. */
export function requireStorageQuota(
  ctx: StoreContext,
  changes: StoreChange[],
  tenant: string,
  kind: UsageKind,
  newBytes: number,
  oldBytes: () => number,
  limit: number | null | undefined,
): void {
  within(
    ctx,
    (tx) => guards.requireStorageQuota(tx, tenant, kind, newBytes, () => tx.call(oldBytes), limit),
    { changes },
  );
}
