// A full disk must not lock keel out of its own data. SQLite needs disk space even to
// delete (the WAL grows by the pages a delete changes), so the data dir keeps a reserve
// file. When a write finds the disk full, the reserve is removed (its space is now there
// for deletes), and until it can be made again every write but a delete is refused with
// STORE_UNAVAILABLE without touching the disk: the freed space goes to the deletes that
// free more, not to the writes that filled it. After a delete commits the WAL is
// checkpointed and truncated and the reserve made again; writes are taken again once
// there is room for WRITE_ROOM_BYTES of writes besides it, counting the pages deletes freed
// inside the database (SQLite reuses them; the file does not shrink), and with less free
// disk than a whole WAL cycle the WAL is kept short (SHORT_WAL_BYTES) until there is. A
// readiness check does the same, counting only free disk space and asking for
// PROBE_ROOM_BYTES: space freed outside keel is noticed without a delete. So does a
// re-check on a timer while the disk is full (write-health.ts), so writes resume without
// anyone asking for readiness. Not ready all that time. A connection without a reserve (a
// peer) re-admits writes the same way only when a statfs of the database's directory shows
// the room; one that cannot look (no path) runs no re-check and leaves it to a delete.

import { closeSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { storeFault } from '../store-errors.ts';
import { WAL_CHECKPOINT_BYTES } from './connection.ts';
import type { RecheckBackoff } from '../write-health.ts';
import { WriteHealth } from '../write-health.ts';

export const RESERVE_FILE_NAME = 'keel.reserve';
/** Room for a few thousand deletes' WAL pages: what writes need again to be taken. */
const WRITE_ROOM_BYTES = 2 * 1024 * 1024;
/**
 * The reserve: WRITE_ROOM_BYTES plus room for the checkpoint after a delete on a full
 * disk, which may grow the database file by as much as the WAL holds (about
 * WAL_CHECKPOINT_BYTES: the pages written since the last checkpoint live only in the WAL;
 * more only after one very large transaction, or long reads that held checkpoints
 * back). A fraction of any real disk.
 */
const DISK_RESERVE_BYTES = WAL_CHECKPOINT_BYTES + WRITE_ROOM_BYTES;
/**
 * The WAL between checkpoints after a full disk, while free disk space is short of a
 * whole WAL_CHECKPOINT_BYTES cycle besides WRITE_ROOM_BYTES: about SQLite's default
 * (1000 pages of 1 KiB), whose cycle WRITE_ROOM_BYTES covers (a checkpoint moves the WAL's pages
 * into the free pages deletes left, and the WAL starts over in its own blocks). Back to
 * WAL_CHECKPOINT_BYTES once a readiness check finds PROBE_ROOM_BYTES free.
 */
const SHORT_WAL_BYTES = 1024 * 1024;
/** Free disk space a readiness check wants before it takes writes again. */
const PROBE_ROOM_BYTES = 64 * 1024 * 1024;
const CHUNK = 64 * 1024;

interface FullDiskGuardOptions {
  /** The reserve file's path; null: no reserve (a peer connection in tests). */
  reservePath: string | null;
  /** Checkpoints and truncates the WAL (best effort). */
  checkpoint: () => void;
  /** Bytes of free pages inside the database (PRAGMA freelist_count × page_size). */
  freePagesBytes: () => number;
  /** Sets the WAL size at which a commit checkpoints (connection.ts). */
  walCheckpointBytes: (bytes: number) => void;
  /**
   * Free disk bytes where the database lives (a statfs of its directory). Absent: the
   * reserve's directory when there is one; else free space cannot be looked at, so no
   * re-check runs and a readiness check does not take writes again.
   */
  freeDiskBytes?: () => number;
  /** Delays of the re-check while the disk is full (write-health.ts's by default). */
  recheckBackoff?: RecheckBackoff;
}

/**
 * Creates the reserve file in full (written, not sparse: the filesystem allocates its
 * blocks at write time); false on ENOSPC. Not fsynced: its content does not matter, and
 * after a crash the next open writes it again.
 */
function makeReserve(path: string, bytes: number): boolean {
  let fd: number | null = null;
  try {
    fd = openSync(path, 'w');
    const zeros = Buffer.alloc(CHUNK);
    for (let written = 0; written < bytes; written += CHUNK) {
      writeSync(fd, zeros, 0, Math.min(CHUNK, bytes - written));
    }
    return true;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== 'ENOSPC' && code !== 'EDQUOT') throw error;
    if (fd !== null) closeSync(fd);
    fd = null;
    rmSync(path, { force: true });
    return false;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

export class FullDiskGuard {
  readonly health: WriteHealth;
  private freeing = 0;

  private readonly reservePath: string | null;
  /** null: free disk space cannot be looked at (no database path). */
  private readonly freeDisk: (() => number) | null;
  /** The WAL is SHORT_WAL_BYTES since a full disk left too little room for a whole one. */
  private shortWal = false;

  constructor(private readonly options: FullDiskGuardOptions) {
    this.reservePath = options.reservePath;
    const reserveDir = options.reservePath === null ? null : dirname(options.reservePath);
    this.freeDisk =
      options.freeDiskBytes ?? (reserveDir === null ? null : () => freeDiskBytesIn(reserveDir));
    // A re-check that cannot look at free space would only guess: none then.
    this.health = new WriteHealth({
      ...(this.freeDisk && { recheck: () => this.recover('probe') }),
      ...(options.recheckBackoff && { backoff: options.recheckBackoff }),
    });
    if (this.reservePath && !makeReserve(this.reservePath, DISK_RESERVE_BYTES)) {
      this.health.record(
        Object.assign(new Error('no room for the reserve'), { code: 'SQLITE_FULL' }),
      );
    }
  }

  /** Runs `body` as a write that frees space: let through while the disk is full. */
  freeingSpace<T>(body: () => T): T {
    this.freeing += 1;
    try {
      return body();
    } finally {
      this.freeing -= 1;
    }
  }

  /** Before a write: while the disk is full only space-freeing writes go on. */
  admit(): void {
    if (this.freeing === 0) this.health.assertWritable();
  }

  /** A write failed: a full disk releases the reserve and starts refusing writes. */
  failed(error: unknown): void {
    if (storeFault(error) !== 'disk_full') return;
    this.health.record(error);
    if (this.reservePath) rmSync(this.reservePath, { force: true });
  }

  /** A write committed: after a delete on a full disk, try to leave the full state. */
  committed(): void {
    if (this.health.diskFull && this.freeing > 0) this.recover('delete');
  }

  /**
   * Checkpoints the WAL, makes the reserve again and takes writes again when there is
   * room; true when writes are taken. `probe` (readiness) counts only free disk space.
   */
  recover(trigger: 'delete' | 'probe'): boolean {
    const freeDisk = this.freeDisk;
    if (!this.health.diskFull) {
      if (trigger === 'probe' && this.shortWal && freeDisk) {
        if (freeDisk() >= PROBE_ROOM_BYTES) this.setShortWal(false);
      }
      return true;
    }
    if (this.reservePath && freeDisk) {
      // Only a statfs while there is plainly no room (a re-check every few seconds).
      if (trigger === 'probe') {
        if (freeDisk() < DISK_RESERVE_BYTES + PROBE_ROOM_BYTES) return false;
      }
      try {
        this.options.checkpoint();
      } catch {
        // Busy readers or no room yet: the free space decides.
      }
      if (!makeReserve(this.reservePath, DISK_RESERVE_BYTES)) return false;
      const free = freeDisk();
      if (!this.hasRoom(trigger, free)) return false;
      // The WAL needs real disk (free pages inside the database do not hold it): with
      // less than a whole cycle of it free, a 4 MiB WAL would fill the disk again.
      this.setShortWal(free < WAL_CHECKPOINT_BYTES + WRITE_ROOM_BYTES);
    } else if (freeDisk) {
      // No reserve (a peer): writes come back only on room a statfs actually shows.
      if (!this.hasRoom(trigger, freeDisk())) return false;
    } else if (trigger === 'probe') {
      // Nothing to look at: only a committed delete takes writes again.
      return false;
    }
    this.health.record();
    return true;
  }

  /** After a delete free pages inside the database count; readiness wants free disk. */
  private hasRoom(trigger: 'delete' | 'probe', freeDiskBytes: number): boolean {
    if (trigger === 'probe') return freeDiskBytes >= PROBE_ROOM_BYTES;
    return freeDiskBytes + this.options.freePagesBytes() >= WRITE_ROOM_BYTES;
  }

  /** The store is closing: no more re-checks. */
  stop(): void {
    this.health.stop();
  }

  private setShortWal(short: boolean): void {
    if (short === this.shortWal) return;
    this.shortWal = short;
    this.options.walCheckpointBytes(short ? SHORT_WAL_BYTES : WAL_CHECKPOINT_BYTES);
  }
}

/** Free bytes an unprivileged writer may use on the filesystem holding `dir`. */
export function freeDiskBytesIn(dir: string): number {
  const stats = statfsSync(dir);
  return stats.bavail * stats.bsize;
}
