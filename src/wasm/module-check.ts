// The check a module passes at registration (docs/wasm-tools.md): it compiles, it is a
// WASI preview-1 *command* (exports `_start` and one memory), every import is a function
// of `wasi_snapshot_preview1`, and its memory maximum is rewritten to the tool's limit.
// V8 lets a wasm32 memory grow to 4 GiB whatever a worker's resourceLimits say, so the
// maximum in the module itself is the only cap that holds; the rewrite edits the one
// memory's limits in the memory section (id 5) and leaves every other byte as it was.

import { KeelError } from '../errors.ts';

export const WASI_MODULE = 'wasi_snapshot_preview1';
export const WASM_PAGE_BYTES = 65_536;

function invalid(message: string): KeelError {
  return new KeelError('WASM_MODULE_INVALID', message, { field: 'module' });
}

interface Cursor {
  bytes: Uint8Array;
  at: number;
}

function readU32(cursor: Cursor): number {
  let result = 0;
  let shift = 0;
  for (;;) {
    if (cursor.at >= cursor.bytes.length) throw invalid('the module ends inside a number');
    const byte = cursor.bytes[cursor.at++] as number;
    result += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) break;
    shift += 7;
    if (shift > 35) throw invalid('a number in the module is too long');
  }
  if (result > 0xffffffff) throw invalid('a number in the module is out of range');
  return result;
}

function writeU32(value: number): number[] {
  const out: number[] = [];
  let rest = value;
  do {
    let byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
    if (rest !== 0) byte |= 0x80;
    out.push(byte);
  } while (rest !== 0);
  return out;
}

/** The module with its one memory's maximum set to min(its own maximum, `maxPages`). */
export function capMemory(bytes: Uint8Array, maxPages: number): Uint8Array {
  const cursor: Cursor = { bytes, at: 8 };
  while (cursor.at < bytes.length) {
    const sectionStart = cursor.at;
    const id = bytes[cursor.at++] as number;
    const size = readU32(cursor);
    const bodyStart = cursor.at;
    const bodyEnd = bodyStart + size;
    if (bodyEnd > bytes.length) throw invalid('a section runs past the end of the module');
    if (id !== 5) {
      cursor.at = bodyEnd;
      continue;
    }
    const count = readU32(cursor);
    if (count !== 1) throw invalid(`the module defines ${count} memories; exactly one is needed`);
    const flags = readU32(cursor);
    if (flags > 1) throw invalid('shared or 64-bit memories are not supported');
    const initial = readU32(cursor);
    const maximum = flags === 1 ? readU32(cursor) : maxPages;
    if (cursor.at !== bodyEnd) throw invalid('the memory section has trailing bytes');
    if (initial > maxPages) {
      throw invalid(
        `the module starts with ${initial} memory pages (${(initial * WASM_PAGE_BYTES) / 1_048_576} MiB), over memory_limit_mb`,
      );
    }
    const body = [1, 1, ...writeU32(initial), ...writeU32(Math.min(maximum, maxPages))];
    const section = [5, ...writeU32(body.length), ...body];
    const out = new Uint8Array(bytes.length - (bodyEnd - sectionStart) + section.length);
    out.set(bytes.subarray(0, sectionStart), 0);
    out.set(section, sectionStart);
    out.set(bytes.subarray(bodyEnd), sectionStart + section.length);
    return out;
  }
  throw invalid('the module defines no memory (an imported memory is not supported)');
}

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
 * Checks `bytes` and returns the module as keel stores and runs it (memory capped) and
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
  const capped = capMemory(bytes, (memoryLimitMb * 1_048_576) / WASM_PAGE_BYTES);
  return { bytes: capped, module: await WebAssembly.compile(capped) };
}
