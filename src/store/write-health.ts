// Whether the last write found the disk full. A full disk does not stop reads (a ping
// still answers), so readiness asks this too: not ready from a write that hit a full disk
// until a write (a delete that freed space, say) commits again, or a re-check finds room.
// A backend that refuses writes while the disk is full (SQLite, disk-reserve.ts) gives a
// re-check, run here on a timer with backoff while the disk is full: space freed outside
// keel is noticed without anyone asking /readyz, which a process nobody polls (or one a
// load balancer took out of rotation for being unready) would otherwise wait for forever.

import { KeelError } from '../errors.ts';
import { STORE_RETRY_AFTER_S, storeFault } from './store-errors.ts';

/** Delays between re-checks while the disk is full: doubling from `firstMs` to `maxMs`. */
export interface RecheckBackoff {
  firstMs: number;
  maxMs: number;
}

/** A statfs most times (disk-reserve.ts), so a short cap costs nothing. */
export const RECHECK_BACKOFF: RecheckBackoff = { firstMs: 1000, maxMs: 10_000 };

export interface WriteHealthOptions {
  /** Looks for room again while the disk is full; records success itself (record()). */
  recheck?: () => unknown;
  backoff?: RecheckBackoff;
}

export class WriteHealth {
  private diskFullSince: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly recheck: (() => unknown) | null;
  private readonly backoff: RecheckBackoff;

  constructor(options: WriteHealthOptions = {}) {
    this.recheck = options.recheck ?? null;
    this.backoff = options.backoff ?? RECHECK_BACKOFF;
  }

  /** Records how a write ended: committed (no error) or failed with `error`. */
  record(error?: unknown): void {
    if (error === undefined) {
      this.diskFullSince = null;
      this.cancelRecheck();
    } else if (storeFault(error) === 'disk_full' && this.diskFullSince === null) {
      this.diskFullSince = Date.now();
      this.scheduleRecheck(this.backoff.firstMs);
    }
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

  /** No re-check after this (the store is closing). */
  stop(): void {
    this.stopped = true;
    this.cancelRecheck();
  }

  /** Whether a re-check is waiting on its timer (tests: no timer left behind). */
  get recheckPending(): boolean {
    return this.timer !== null;
  }

  private scheduleRecheck(delayMs: number): void {
    const recheck = this.recheck;
    if (recheck === null || this.stopped || this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      try {
        recheck();
      } catch {
        // No room yet, or the disk still refuses: the next re-check asks again.
      }
      if (this.diskFull) this.scheduleRecheck(Math.min(delayMs * 2, this.backoff.maxMs));
    }, delayMs);
    // A store nobody closed must not hold the process open for its re-checks.
    this.timer.unref();
  }

  private cancelRecheck(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
