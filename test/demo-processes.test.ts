// The demo's child-process start (src/cli/demo-processes.ts) on a slow machine: found on
// the first-hour walk under load, `npm run demo` gave up after 30 s while keel serve was
// still starting. Now the wait is long (180 s by default) and says every 10 s that it is
// still waiting; a child that never gets ready is killed with a message saying how long.
// A stand-in script plays keel here, so the timings are the test's own.

import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startKeelChild, stopChild } from '../src/cli/demo-processes.ts';

let dir: string;
let slowBin: string;

describe('demo child processes on a slow machine', () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'keel-demo-procs-'));
    slowBin = join(dir, 'slow-keel.mjs');
    // Prints its ready line after argv[2] ms (never when it is "never"), then idles.
    await writeFile(
      slowBin,
      `const ms = process.argv[2];
if (ms !== 'never') setTimeout(() => console.log('keel listening on http://127.0.0.1:1'), Number(ms));
setInterval(() => undefined, 1000);
`,
    );
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a slow start is awaited and reported while it lasts', async () => {
    const waited: number[] = [];
    const child = await startKeelChild(['1500'], process.env, /keel listening on (\S+)/, {
      bin: slowBin,
      waitingEveryMs: 300,
      onWaiting: (ms) => waited.push(ms),
    });
    try {
      assert.equal(child.url, 'http://127.0.0.1:1');
      assert.ok(waited.length >= 2, `told it is still waiting: ${waited.join(', ')}`);
      assert.deepEqual(
        waited,
        [...waited].sort((a, b) => a - b),
        'the waited time grows',
      );
      const count = waited.length;
      await new Promise((resolve) => setTimeout(resolve, 700));
      assert.equal(waited.length, count, 'no more reports once ready');
    } finally {
      await stopChild(child);
    }
  });

  it('one that never gets ready is killed, and the message says after how long', async () => {
    const started = Date.now();
    await assert.rejects(
      startKeelChild(['never'], process.env, /keel listening on (\S+)/, {
        bin: slowBin,
        timeoutMs: 800,
      }),
      /keel never did not become ready in 0\.8 s \(is the machine very busy\?\)/,
    );
    assert.ok(Date.now() - started < 10_000);
  });
});
