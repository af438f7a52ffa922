// Builds the AssemblyScript example tool (examples/wasm-tools/words.ts) with the
// installed `asc`, exactly as docs/wasm-tools.md tells a user to; used by its test and
// by the wasm benchmark.

import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = new URL('../..', import.meta.url).pathname;

export async function buildWordsExample(): Promise<Uint8Array> {
  const dir = await mkdtemp(join(tmpdir(), 'keel-asc-'));
  try {
    const out = join(dir, 'words.wasm');
    await promisify(execFile)(
      process.execPath,
      [
        join(ROOT, 'node_modules/assemblyscript/bin/asc.js'),
        'examples/wasm-tools/words.ts',
        '--config',
        'node_modules/@assemblyscript/wasi-shim/asconfig.json',
        '-O3',
        '--noAssert',
        '-o',
        out,
      ],
      { cwd: ROOT },
    );
    return new Uint8Array(await readFile(out));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
