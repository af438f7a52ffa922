// Whether the last write found the disk full. A full disk does not stop reads (a ping
// still answers), so readiness asks this too: not ready from a write that hit a full disk
// until a write (a delete that freed space, say) commits again.

import { KeelError } from '../errors.ts';
import { STORE_RETRY_AFTER_S, storeFault } from './store-errors.ts';

export class WriteHealth {
  private diskFullSince: number | null = null;

  /** Records how a write ended: committed (no error) or failed with `error`. */
  record(error?: unknown): void {
    if (error === undefined) this.diskFullSince = null;
    else if (storeFault(error) === 'disk_full') this.diskFullSince ??= Date.now();
  }

  get diskFull(): boolean {
    return this.diskFullSince !== null;
  }

  /** Throws STORE_UNAVAILABLE while the disk is full (readiness). */
  assertWritable(): void {
    if (this.diskFullSince === null) return;
    throw new KeelError('STORE_UNAVAILABLE', 'the store is out of disk space', {
      fault: 'disk_full',
      retry_after_s: STORE_RETRY_AFTER_S,
    });
  }
}
