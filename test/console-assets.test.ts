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
    const shell = assets.get('index.html');
    assert.ok(shell);
    const br = shell.encoded('br');
    assert.ok(br instanceof Promise, 'brotli runs off the event loop');
    assert.equal(shell.encoded('br'), br, 'a concurrent first request shares the compression');
    assert.deepEqual(brotliDecompressSync(await br), shell.identity);
    assert.deepEqual(gunzipSync(await shell.encoded('gzip')), shell.identity);
  });
});
