// The console's files are compressed off the event loop (brotli 11 on the first request
// for a file would otherwise stall runs and streams served by the same process), once per
// file and encoding.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { loadConsoleAssets } from '../src/console/plugin.ts';

describe('console assets', () => {
  it('compresses asynchronously, once per file and encoding, to the same bytes', async () => {
    const assets = loadConsoleAssets();
    // The largest file: brotli 11 takes ~10 ms on it, so the loop visibly turns meanwhile.
    const shell = assets.get('app.js');
    assert.ok(shell);
    // A compression done on the event loop (a sync call wrapped in a promise) would finish
    // before any other callback runs; one on zlib's pool lets the loop turn meanwhile.
    let loopTurned = false;
    setImmediate(() => {
      loopTurned = true;
    });
    const br = shell.encoded('br');
    assert.ok(br instanceof Promise, 'brotli runs off the event loop');
    assert.equal(loopTurned, false);
    await br;
    assert.ok(loopTurned, 'the event loop turned while brotli ran');
    assert.equal(shell.encoded('br'), br, 'a concurrent first request shares the compression');
    assert.deepEqual(brotliDecompressSync(await br), shell.identity);
    assert.deepEqual(gunzipSync(await shell.encoded('gzip')), shell.identity);
  });
});
