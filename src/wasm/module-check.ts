// The check a module passes at registration (docs/wasm-tools.md): it compiles, it is a
// WASI preview-1 *command* (exports `_start` and one memory), every import is a function
// of `wasi_snapshot_preview1`, and the maxima of what it can grow (memory, tables) are
// rewritten within keel's limits (module-limits.ts).

import { WASM_PAGE_BYTES, capResources, invalid } from './module-limits.ts';

export const WASI_MODULE = 'wasi_snapshot_preview1';

/** Checks the ABI of a compiled module; throws WASM_MODULE_INVALID naming the problem. */
export function checkAbi(module: WebAssembly.Module): void {
  for (const entry of WebAssembly.Module.imports(module)) {
    if (entry.module !== WASI_MODULE || entry.kind !== 'function') {
      throw invalid(
        `the module imports ${entry.kind} ${entry.module}.${entry.name}; only functions of ${WASI_MODULE} are provided`,
      );
    }
  }
  const exports = WebAssembly.Module.exports(module);
  if (!exports.some((entry) => entry.name === '_start' && entry.kind === 'function')) {
    throw invalid('the module exports no _start function (a WASI command module is needed)');
  }
  const memories = exports.filter((entry) => entry.kind === 'memory');
  if (memories.length !== 1 || memories[0]?.name !== 'memory') {
    throw invalid('the module must export exactly one memory, named "memory"');
  }
}

/**
 * Checks `bytes` and returns the module as keel stores and runs it (memory and tables capped) and
 * compiled. Throws WASM_MODULE_INVALID (400) for anything keel cannot run.
 */
export async function prepareModule(
  bytes: Uint8Array,
  memoryLimitMb: number,
): Promise<{ bytes: Uint8Array; module: WebAssembly.Module }> {
  let compiled: WebAssembly.Module;
  try {
    compiled = await WebAssembly.compile(bytes);
  } catch (error) {
    throw invalid(`the module does not compile: ${(error as Error).message}`);
  }
  checkAbi(compiled);
  const capped = capResources(bytes, (memoryLimitMb * 1_048_576) / WASM_PAGE_BYTES);
  return { bytes: capped, module: await WebAssembly.compile(capped) };
}
