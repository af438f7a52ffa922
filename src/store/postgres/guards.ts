// The shared write guards (../repositories/guards.ts) for the repositories still written
// per backend, inside their transaction.

import type { UsageKind } from '../rules/tenant-usage.ts';
import * as guards from '../repositories/guards.ts';
import type { Tx } from './context.ts';
import type { TenantRow } from './rows.ts';
import { within } from './steps.ts';

export function requireTenant(tx: Tx, name: string): Promise<TenantRow> {
  return within(tx, (writes) => guards.requireTenant(writes, name));
}

/** guards.requireStorageQuota, with the replaced size read by `oldBytes` after the turn. */
export function requireStorageQuota(
  tx: Tx,
  tenant: string,
  kind: UsageKind,
  newBytes: number,
  oldBytes: () => Promise<number>,
  limit: number | null | undefined,
): Promise<void> {
  return within(tx, (writes) =>
    guards.requireStorageQuota(writes, tenant, kind, newBytes, () => writes.call(oldBytes), limit),
  );
}
