// The limits a module declares for what it can grow, rewritten or refused at
// registration (docs/wasm-tools.md, "Resource limits"). Only the module's own declared
// maxima hold: V8 lets a wasm32 memory grow to 4 GiB whatever a worker's resourceLimits
// say, and it allocates a table's elements on the worker's heap with an allocation that
// aborts the whole process — not just the worker — when that heap is full (a `_start`
// looping `table.grow` on a table without a maximum takes keel down in under a second).
// So one pass over the sections:
//   type (1): function types only — no wasm-GC struct/array types, whose allocations
//     this check could not bound;
//   table (4): the sum of the tables' initial sizes must fit MAX_TABLE_ELEMENTS, and
//     every maximum is rewritten so that the sum of the maxima does too;
//   memory (5): exactly one 32-bit unshared memory, its maximum set to the tool's limit;
//   element (9): the elements of all segments together must fit MAX_ELEMENT_SEGMENT_ELEMENTS
//     (V8 builds a passive segment on the worker's heap at its first `table.init`: 10
//     million elements, a 10 MB module, took 85 MB of a 64 MiB heap).
// Every other byte is left as it was. Imported tables, memories and globals are refused
// by the ABI check (only functions may be imported).

import { KeelError } from '../errors.ts';

export const WASM_PAGE_BYTES = 65_536;
/**
 * Elements of all of a module's tables together, initial and grown: ~3 MB of the
 * worker's heap at most (V8 keeps ~30 bytes per funcref element), far from its limit.
 * Toolchains size the function table to the address-taken functions (hundreds to a few
 * thousand in large programs).
 */
export const MAX_TABLE_ELEMENTS = 100_000;
/**
 * Elements of all of a module's element segments together (active, passive and
 * declarative), and at most as many segments: the same budget as tables, since an active
 * segment fills a table and a passive one is copied into one.
 */
export const MAX_ELEMENT_SEGMENT_ELEMENTS = MAX_TABLE_ELEMENTS;

const SECTION_TYPE = 1;
const SECTION_TABLE = 4;
const SECTION_MEMORY = 5;
const SECTION_ELEMENT = 9;
const FUNC_TYPE = 0x60;
/** Reference types with a heap-type index after them (function references / GC). */
const REF_WITH_HEAP_TYPE = new Set([0x63, 0x64]);

/** The module is refused: a 400 whose message names the field. */
export function invalid(message: string): KeelError {
  return new KeelError('WASM_MODULE_INVALID', `module: ${message}`, { field: 'module' });
}

interface Cursor {
  bytes: Uint8Array;
  at: number;
}

function readByte(cursor: Cursor): number {
  if (cursor.at >= cursor.bytes.length) throw invalid('the module ends inside a section');
  return cursor.bytes[cursor.at++] as number;
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

/** Skips a signed LEB128 (a heap type); its value does not matter here. */
function skipLeb(cursor: Cursor): void {
  while ((readByte(cursor) & 0x80) !== 0);
}

/** An unsigned LEB128, as the binary format writes every count and size. */
export function writeU32(value: number): number[] {
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

/** A value type: one byte, or a reference type prefix and its heap type. */
function skipValueType(cursor: Cursor): void {
  if (REF_WITH_HEAP_TYPE.has(readByte(cursor))) skipLeb(cursor);
}

function checkTypes(cursor: Cursor, end: number): void {
  const count = readU32(cursor);
  for (let i = 0; i < count; i++) {
    if (readByte(cursor) !== FUNC_TYPE) {
      throw invalid(`type ${i} is not a function type (wasm-GC types are not supported)`);
    }
    for (let list = 0; list < 2; list++) {
      const types = readU32(cursor);
      for (let t = 0; t < types; t++) skipValueType(cursor);
    }
  }
  if (cursor.at !== end) throw invalid('the type section has trailing bytes');
}

interface Limits {
  initial: number;
  maximum: number | null;
}

function readLimits(cursor: Cursor, what: string): Limits {
  const flags = readU32(cursor);
  if (flags > 1) throw invalid(`shared or 64-bit ${what} are not supported`);
  const initial = readU32(cursor);
  return { initial, maximum: flags === 1 ? readU32(cursor) : null };
}

function limitsBytes(initial: number, maximum: number): number[] {
  return [1, ...writeU32(initial), ...writeU32(maximum)];
}

/** The table section with every maximum within what is left of MAX_TABLE_ELEMENTS. */
function capTables(cursor: Cursor, end: number): number[] {
  const count = readU32(cursor);
  const tables: { type: Uint8Array; limits: Limits }[] = [];
  for (let i = 0; i < count; i++) {
    const typeStart = cursor.at;
    if (cursor.bytes[cursor.at] === 0x40) {
      throw invalid(`table ${i} has an initializer expression, which is not supported`);
    }
    skipValueType(cursor);
    const type = cursor.bytes.subarray(typeStart, cursor.at);
    tables.push({ type, limits: readLimits(cursor, 'tables') });
  }
  if (cursor.at !== end) throw invalid('the table section has trailing bytes');
  const initial = tables.reduce((sum, table) => sum + table.limits.initial, 0);
  if (initial > MAX_TABLE_ELEMENTS) {
    throw invalid(
      `the module's tables start with ${initial} elements; at most ${MAX_TABLE_ELEMENTS} in all`,
    );
  }
  // What the tables may still grow by, together; handed out in order.
  let headroom = MAX_TABLE_ELEMENTS - initial;
  const body = [...writeU32(count)];
  for (const { type, limits } of tables) {
    const growth = Math.min((limits.maximum ?? Infinity) - limits.initial, headroom);
    headroom -= growth;
    body.push(...type, ...limitsBytes(limits.initial, limits.initial + growth));
  }
  return body;
}

/** The memory section with its one memory's maximum at most `maxPages`. */
function capMemory(cursor: Cursor, end: number, maxPages: number): number[] {
  const count = readU32(cursor);
  if (count !== 1) throw invalid(`the module defines ${count} memories; exactly one is needed`);
  const { initial, maximum } = readLimits(cursor, 'memories');
  if (cursor.at !== end) throw invalid('the memory section has trailing bytes');
  if (initial > maxPages) {
    throw invalid(
      `the module starts with ${initial} memory pages (${(initial * WASM_PAGE_BYTES) / 1_048_576} MiB), over memory_limit_mb`,
    );
  }
  return [1, ...limitsBytes(initial, Math.min(maximum ?? maxPages, maxPages))];
}

/**
 * Skips a constant expression (an element or an offset) up to its `end`: the constant
 * instructions of wasm 2.0 and extended-const. Anything else is refused rather than
 * guessed at (the module compiled, so this only meets what keel does not support).
 */
function skipConstExpr(cursor: Cursor): void {
  for (;;) {
    const opcode = readByte(cursor);
    if (opcode === 0x0b) return; // end
    if (opcode === 0x41 || opcode === 0x42 || opcode === 0xd0)
      skipLeb(cursor); // *.const, ref.null
    else if (opcode === 0x23 || opcode === 0xd2)
      readU32(cursor); // global.get, ref.func
    else if (opcode === 0x43)
      cursor.at += 4; // f32.const
    else if (opcode === 0x44)
      cursor.at += 8; // f64.const
    else if (![0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e].includes(opcode)) {
      // Not i32/i64 add, sub, mul either.
      throw invalid(`an element segment uses instruction 0x${opcode.toString(16)}, not supported`);
    }
  }
}

/** Checks that the element segments hold at most MAX_ELEMENT_SEGMENT_ELEMENTS in all. */
function checkElements(cursor: Cursor, end: number): void {
  const count = readU32(cursor);
  if (count > MAX_ELEMENT_SEGMENT_ELEMENTS) {
    throw invalid(
      `the module has ${count} element segments; at most ${MAX_ELEMENT_SEGMENT_ELEMENTS}`,
    );
  }
  let elements = 0;
  for (let i = 0; i < count; i++) {
    // Flags 0-7 (wasm 2.0): bit 0 passive or declarative, bit 1 an explicit table index
    // (active) or declarative, bit 2 expressions instead of function indices.
    const flags = readU32(cursor);
    if (flags > 7) throw invalid(`element segment ${i} has unknown flags ${flags}`);
    const active = (flags & 1) === 0;
    if (active && (flags & 2) !== 0) readU32(cursor); // table index
    if (active) skipConstExpr(cursor); // offset
    if (!active || (flags & 2) !== 0) {
      // elemkind (0x00) or a reference type
      if ((flags & 4) === 0) readByte(cursor);
      else skipValueType(cursor);
    }
    const size = readU32(cursor);
    elements += size;
    if (elements > MAX_ELEMENT_SEGMENT_ELEMENTS) {
      throw invalid(
        `element segment ${i} brings the module's element segments to ${elements} elements; at most ${MAX_ELEMENT_SEGMENT_ELEMENTS} in all`,
      );
    }
    for (let e = 0; e < size; e++) {
      if ((flags & 4) === 0) readU32(cursor);
      else skipConstExpr(cursor);
    }
  }
  if (cursor.at !== end) throw invalid('the element section has trailing bytes');
}

/**
 * The module with its memory maximum at most `maxPages` and its tables' maxima within
 * MAX_TABLE_ELEMENTS, its element segments within MAX_ELEMENT_SEGMENT_ELEMENTS; the same bytes
 * again for a module already capped. Throws WASM_MODULE_INVALID (field `module`) for what cannot be
 * bounded.
 */
export function capResources(bytes: Uint8Array, maxPages: number): Uint8Array {
  const parts: Uint8Array[] = [bytes.subarray(0, 8)];
  const cursor: Cursor = { bytes, at: 8 };
  let memory = false;
  while (cursor.at < bytes.length) {
    const sectionStart = cursor.at;
    const id = readByte(cursor);
    const size = readU32(cursor);
    const bodyEnd = cursor.at + size;
    if (bodyEnd > bytes.length) throw invalid('a section runs past the end of the module');
    let body: number[] | null = null;
    if (id === SECTION_TYPE) checkTypes(cursor, bodyEnd);
    else if (id === SECTION_TABLE) body = capTables(cursor, bodyEnd);
    else if (id === SECTION_ELEMENT) checkElements(cursor, bodyEnd);
    else if (id === SECTION_MEMORY) {
      body = capMemory(cursor, bodyEnd, maxPages);
      memory = true;
    }
    if (body) parts.push(new Uint8Array([id, ...writeU32(body.length), ...body]));
    else parts.push(bytes.subarray(sectionStart, bodyEnd));
    cursor.at = bodyEnd;
  }
  if (!memory) throw invalid('the module defines no memory (an imported memory is not supported)');
  // A plain array of its own (not a view into Buffer's shared pool).
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
