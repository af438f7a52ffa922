// The re-check behind "writes resume on their own after a full disk"
// (store-sqlite-disk-full.test.ts shows it end to end on a real full disk): while the
// disk is full the store looks for room again on a timer, backing off, and stops once
// writes are taken or the store closes — no timer is left behind either way.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FullDiskGuard } from '../src/store/sqlite/disk-reserve.ts';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import { WriteHealth } from '../src/store/write-health.ts';

const diskFull = (): Error => Object.assign(new Error('disk full'), { code: 'SQLITE_FULL' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('write health: re-check while the disk is full', () => {
  const dirs: string[] = [];
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('re-checks with doubling delays up to the cap, and stops once a write is taken', async () => {
    const at: number[] = [];
    let roomAfter = 5;
    const health: WriteHealth = new WriteHealth({
      backoff: { firstMs: 20, maxMs: 80 },
      recheck: () => {
        at.push(Date.now());
        if (at.length === 2) throw new Error('statfs failed');
        if (at.length >= roomAfter) health.record();
      },
    });
    assert.equal(health.recheckPending, false);
    const start = Date.now();
    health.record(diskFull());
    assert.equal(health.diskFull, true);
    assert.equal(health.recheckPending, true);
    while (health.diskFull) await sleep(10);
    const gaps = at.map((time, index) => time - (index === 0 ? start : (at[index - 1] ?? 0)));
    console.log(`re-check gaps (ms) with backoff 20→80: ${gaps.join(', ')}`);
    assert.equal(at.length, 5, 'a throwing re-check is retried');
    // Timers fire no earlier than asked: 20, 40, 80, 80, 80.
    [20, 40, 80, 80, 80].forEach((least, index) => assert.ok((gaps[index] ?? 0) >= least - 2));
    assert.equal(health.recheckPending, false);
    roomAfter = Infinity;
    await sleep(200);
    assert.equal(at.length, 5, 'no re-check once healthy');
  });

  it('stop() cancels the pending re-check and no later disk-full starts one', async () => {
    let calls = 0;
    const health = new WriteHealth({
      backoff: { firstMs: 20, maxMs: 20 },
      recheck: () => (calls += 1),
    });
    health.record(diskFull());
    health.stop();
    assert.equal(health.recheckPending, false);
    health.record();
    health.record(diskFull());
    await sleep(100);
    assert.equal(calls, 0);
    assert.equal(health.recheckPending, false);
  });

  it('a SQLite store closed while the disk is full leaves no re-check behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keel-write-health-'));
    dirs.push(dir);
    const store = await openSqliteStore({ path: join(dir, 'keel.db'), durability: 'process' });
    const health = (store as unknown as { ctx: { disk: { health: WriteHealth } } }).ctx.disk.health;
    health.record(diskFull());
    assert.equal(health.recheckPending, true);
    await store.close();
    assert.equal(health.recheckPending, false);
  });

  it('without a reserve (a peer) writes come back only when a statfs shows room', async () => {
    let free = 0;
    let looked = 0;
    const guard = new FullDiskGuard({
      reservePath: null,
      checkpoint: () => undefined,
      freePagesBytes: () => 0,
      walCheckpointBytes: () => undefined,
      freeDiskBytes: () => {
        looked += 1;
        return free;
      },
      recheckBackoff: { firstMs: 20, maxMs: 40 },
    });
    guard.failed(diskFull());
    assert.equal(guard.health.recheckPending, true);
    // Past the default first re-check (1 s) too: before, that one took writes back blindly.
    await sleep(1200);
    console.log(`statfs says 0 bytes free: ${looked} re-checks in 1.2 s, disk full still`);
    assert.equal(guard.health.diskFull, true, 'the re-check took writes back on a full disk');
    assert.ok(looked > 0, 'the re-check looked at free space');
    assert.equal(guard.recover('probe'), false, 'readiness took writes back on a full disk');
    assert.throws(() => guard.admit(), { code: 'STORE_UNAVAILABLE' });
    free = 1024 ** 3;
    const start = Date.now();
    while (guard.health.diskFull && Date.now() - start < 2000) await sleep(10);
    console.log(`room back: writes taken after ${Date.now() - start} ms`);
    assert.equal(guard.health.diskFull, false);
    assert.equal(guard.health.recheckPending, false);
    guard.admit();
    guard.stop();
  });

  it('a guard that cannot look at free space runs no re-check and leaves it to a delete', async () => {
    const guard = new FullDiskGuard({
      reservePath: null,
      checkpoint: () => undefined,
      freePagesBytes: () => 0,
      walCheckpointBytes: () => undefined,
    });
    guard.failed(diskFull());
    assert.equal(guard.health.recheckPending, false);
    assert.equal(guard.recover('probe'), false);
    assert.equal(guard.health.diskFull, true);
    guard.freeingSpace(() => guard.committed());
    assert.equal(guard.health.diskFull, false, 'a committed delete takes writes again');
  });
});
