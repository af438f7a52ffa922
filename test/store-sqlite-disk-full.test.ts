// A full disk under a real `keel serve` on SQLite: its data dir is a small tmpfs mount.
// Filled through the API with artifacts until a write is refused: that write and the
// ones after it answer 503 STORE_UNAVAILABLE with Retry-After (not 500), /readyz answers
// 503, deletes still work (the data dir's reserve file is given up for them), and once a
// delete made room /readyz is 200 and writes (an artifact, a turn) work again. And when
// the space comes back outside keel (another file on the disk removed), keel notices on
// its own and takes turns again without anyone asking /readyz.
// Needs root to mount; without it the test is skipped with a loud line.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  TENANT,
  call,
  cleanup,
  serve,
  setupTenant,
  waitTerminal,
} from './helpers/crash-harness.ts';

// Room for the database, a 4 MiB WAL, the 6 MiB reserve and a few dozen artifacts.
const DISK_BYTES = 20 * 1024 * 1024;
const ARTIFACT_BYTES = 256 * 1024;

/** Mounts a tmpfs of `bytes`; returns why not when that is impossible. */
function mountSmallDisk(dir: string, bytes: number): string | null {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], {
      stdio: 'pipe',
    });
    return null;
  } catch (error) {
    return (error as Error).message.split('\n')[0] ?? 'mount failed';
  }
}

const mountPoint = mkdtempSync(join(tmpdir(), 'keel-full-disk-'));
const unmountable = mountSmallDisk(mountPoint, DISK_BYTES);
const skip = unmountable
  ? `SKIPPED test/store-sqlite-disk-full.test.ts: cannot mount a small tmpfs (${unmountable}); run as root to test a real full disk`
  : false;
if (skip) process.stderr.write(`\n!!! ${skip}\n\n`);

async function putArtifact(url: string, path: string, bytes: number) {
  const response = await fetch(`${url}/v1/tenants/${TENANT}/artifacts/${path}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/octet-stream' },
    body: new Uint8Array(bytes).fill(path.length % 251),
  });
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    body: (await response.json()) as any,
  };
}

async function readyz(url: string) {
  const response = await fetch(`${url}/readyz`);
  return { status: response.status, retryAfter: response.headers.get('retry-after') };
}

describe('disk full [sqlite, keel serve child, tmpfs]', { skip }, () => {
  after(() => {
    cleanup();
    if (!unmountable) execFileSync('umount', ['-l', mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  });

  it('503 STORE_UNAVAILABLE + Retry-After, /readyz not ready, deletes work, then writes work again', async () => {
    const keel = await serve(join(mountPoint, 'data'), {});
    await setupTenant(keel.url);

    let written = 0;
    let refused: Awaited<ReturnType<typeof putArtifact>> | null = null;
    while (!refused) {
      const answer = await putArtifact(keel.url, `fill/${written}`, ARTIFACT_BYTES);
      if (answer.status === 201) written += 1;
      else refused = answer;
      assert.ok(written < (2 * DISK_BYTES) / ARTIFACT_BYTES, 'the disk never filled up');
    }
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'STORE_UNAVAILABLE');
    assert.ok(refused.retryAfter, 'Retry-After on the refused write');

    const notReady = await readyz(keel.url);
    assert.equal(notReady.status, 503);
    assert.ok(notReady.retryAfter);
    // A small write is refused too while the disk is full (nothing is attempted).
    const small = await putArtifact(keel.url, 'small', 10);
    assert.equal(small.status, 503);
    assert.equal(small.body.error.code, 'STORE_UNAVAILABLE');

    // Deletes work, and give the space back (inside the database: the file keeps its size).
    const deletes = 16;
    for (let index = 0; index < deletes; index++) {
      const answer = await call(
        keel.url,
        'DELETE',
        `/v1/tenants/${TENANT}/artifacts/fill/${index}`,
      );
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body.deleted, true);
    }
    assert.equal((await readyz(keel.url)).status, 200, '/readyz once deletes made room');
    const after = await putArtifact(keel.url, 'after', 64 * 1024);
    assert.equal(after.status, 201, JSON.stringify(after.body));
    // Writes keep working past the free disk, into the pages the deletes freed: the WAL
    // must stay within the disk that is left (a 4 MiB WAL needs 4 MiB of real disk; after
    // a full disk keel checkpoints every 1 MiB until there is room again).
    const stats = statfsSync(mountPoint);
    const freeBytes = stats.bavail * stats.bsize;
    const refill = Math.min(freeBytes + 512 * 1024, 3.5 * 1024 * 1024);
    let refilled = 0;
    for (let index = 0; refilled < refill; index++) {
      const answer = await putArtifact(keel.url, `refill/${index}`, 64 * 1024);
      assert.equal(answer.status, 201, `refill ${index}: ${JSON.stringify(answer.body)}`);
      refilled += 64 * 1024;
    }
    const turn = await call(keel.url, 'POST', `/v1/tenants/${TENANT}/turns`, {
      agent: 'a',
      scope: 's',
      payload: { text: 'after the disk was full' },
    });
    assert.equal(turn.status, 202, JSON.stringify(turn.body));
    assert.equal(await waitTerminal(keel.url, turn.body.run_id as string), 'succeeded');
    process.stdout.write(
      `disk-full[sqlite] disk_bytes=${DISK_BYTES} artifacts_written=${written} refused=${refused.status} ready_while_full=${notReady.status} deletes=${deletes} write_after=${after.status} free_after_recovery=${freeBytes} refilled=${refilled} process_alive=true\n`,
    );
    await keel.terminate();
  });
});

// Room for the re-check's 64 MiB of free disk besides the reserve, the database and a WAL.
const ROOMY_DISK_BYTES = 96 * 1024 * 1024;

/** Writes a file of zeros until the disk is full; returns its size. */
function fillDisk(path: string): number {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(1024 * 1024);
  let written = 0;
  try {
    for (;;) written += writeSync(fd, chunk);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  return written;
}

const roomyMount = mkdtempSync(join(tmpdir(), 'keel-full-disk-roomy-'));
const roomyUnmountable = skip ? 'skipped' : mountSmallDisk(roomyMount, ROOMY_DISK_BYTES);

describe('disk full, space freed outside keel [sqlite, keel serve child, tmpfs]', { skip }, () => {
  after(() => {
    cleanup();
    if (!roomyUnmountable) execFileSync('umount', ['-l', roomyMount]);
    rmSync(roomyMount, { recursive: true, force: true });
  });

  it('writes resume on their own once space is back: no /readyz, no delete', async () => {
    assert.equal(roomyUnmountable, null);
    const keel = await serve(join(roomyMount, 'data'), {});
    await setupTenant(keel.url);
    const filler = join(roomyMount, 'filler');
    const fillerBytes = fillDisk(filler);

    let written = 0;
    let refused: Awaited<ReturnType<typeof putArtifact>> | null = null;
    while (!refused) {
      const answer = await putArtifact(keel.url, `fill/${written}`, ARTIFACT_BYTES);
      if (answer.status === 201) written += 1;
      else refused = answer;
      assert.ok(written < ROOMY_DISK_BYTES / ARTIFACT_BYTES, 'the disk never filled up');
    }
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'STORE_UNAVAILABLE');

    // Space comes back outside keel; nobody asks /readyz and nothing is deleted in keel.
    rmSync(filler);
    const freedAt = Date.now();
    let attempts = 0;
    let taken: Awaited<ReturnType<typeof putArtifact>> | null = null;
    // A guard against waiting forever (old code: refused until /readyz or a delete).
    while (Date.now() - freedAt < 45_000) {
      attempts += 1;
      const answer = await putArtifact(keel.url, 'after-free', 10);
      if (answer.status === 201) {
        taken = answer;
        break;
      }
      assert.equal(answer.status, 503, JSON.stringify(answer.body));
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const recoveredMs = Date.now() - freedAt;
    process.stdout.write(
      `disk-full-recheck[sqlite] disk_bytes=${ROOMY_DISK_BYTES} filler_bytes=${fillerBytes} artifacts_written=${written} refused=${refused.status} writes_taken_after_ms=${taken ? recoveredMs : 'never'} attempts=${attempts} readyz_calls=0\n`,
    );
    assert.ok(taken, `writes still refused ${recoveredMs} ms after space was freed`);
    const turn = await call(keel.url, 'POST', `/v1/tenants/${TENANT}/turns`, {
      agent: 'a',
      scope: 's',
      payload: { text: 'after space came back' },
    });
    assert.equal(turn.status, 202, JSON.stringify(turn.body));
    assert.equal(await waitTerminal(keel.url, turn.body.run_id as string), 'succeeded');
    assert.equal((await readyz(keel.url)).status, 200);
    await keel.terminate();
  });
});
