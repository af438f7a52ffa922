// Storage quotas per tenant ([tenant_limits] memory_bytes, artifact_bytes): the rules
// both store backends follow, written once. Usage lives in the tenant_usage table, kept
// exact by triggers (migration 006 of each backend) on every write and delete, a
// tenant's cascade included. A put checks it inside its own transaction, after taking
// the tenant's usage lock (SQLite: the single writer; PostgreSQL: a per-tenant advisory
// lock), so two racing writes cannot both pass the last free bytes.
//
// What counts: a memory fact is the UTF-8 bytes of its text plus its metadata JSON; an
// artifact its body. Replacing counts the difference (a shrinking write always passes,
// even over a lowered quota); deleting frees the bytes.

import { KeelError } from '../../errors.ts';

export type UsageKind = 'memory_bytes' | 'artifact_bytes';

/** The bytes a fact counts against memory_bytes (the triggers compute the same in SQL). */
export function memoryFactBytes(text: string, metadataJson: string): number {
  return Buffer.byteLength(text, 'utf8') + Buffer.byteLength(metadataJson, 'utf8');
}

/** True when a write that grows usage by `delta` bytes would pass `limit` (null: none). */
export function exceedsQuota(
  used: number,
  delta: number,
  limit: number | null | undefined,
): boolean {
  return limit !== null && limit !== undefined && delta > 0 && used + delta > limit;
}

/** The error a write past a storage quota raises (403 QUOTA_EXCEEDED naming the limit). */
export function storageQuotaError(
  tenant: string,
  kind: UsageKind,
  limit: number,
  used: number,
  delta: number,
): KeelError {
  const what = kind === 'memory_bytes' ? 'memory facts' : 'artifacts';
  return new KeelError(
    'QUOTA_EXCEEDED',
    `tenant ${tenant} uses ${used} of ${limit} bytes of ${what} (limit tenant_limits.${kind}); this write needs ${delta} more: delete some first`,
    { limit: kind, limit_bytes: limit, used_bytes: used },
  );
}
