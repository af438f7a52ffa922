// The AssemblyScript example (examples/wasm-tools/words.ts) builds with the documented
// command and works as a keel tool: it parses its JSON envelope (escapes included),
// answers JSON, and a missing argument is a non-zero exit with its stderr.

import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { prepareModule } from '../src/wasm/module-check.ts';
import type { WasmPool } from '../src/wasm/pool.ts';
import { createWasmPool } from '../src/wasm/pool.ts';
import { buildWordsExample } from './helpers/wasm-example.ts';

let module: WebAssembly.Module;
let pool: WasmPool;

before(async () => {
  const bytes = await buildWordsExample();
  console.log(`words.wasm: ${bytes.byteLength} bytes`);
  module = (await prepareModule(bytes, 64)).module;
  pool = createWasmPool({ size: 1 });
});

after(async () => {
  await pool?.close();
});

function call(args: unknown) {
  return pool.run({
    tenant: 'acme',
    module,
    input: Buffer.from(JSON.stringify({ arguments: args, idempotency_key: 'r:c' })),
    maxOutputBytes: 65_536,
    memoryLimitBytes: 64 * 1_048_576,
    timeoutMs: 5_000,
    deadline: Date.now() + 30_000,
    signal: new AbortController().signal,
  });
}

it('counts words and characters of arguments.text', async () => {
  const text = 'keel runs\ttools  "safely"\nété \\ ok';
  const result = await call({ other: [1, { a: 'x' }], text });
  assert.deepEqual(result, {
    ok: true,
    value: { words: text.trim().split(/\s+/).length, characters: text.length },
  });
});

it('a missing argument is a non-zero exit with the tool’s message', async () => {
  const result = await call({ nope: true });
  assert.equal(result.ok, false);
  assert.ok(!result.ok && result.code === 'WASM_EXIT_NONZERO');
  assert.match(!result.ok ? result.message : '', /exit code 2: arguments.text/);
});
