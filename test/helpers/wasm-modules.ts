// WebAssembly test modules, written as WAT here and built with the `wabt` npm package
// (no binaries in the repo): a well-behaved echo tool and the hostile ones of
// docs/wasm-tools.md's failure table.

import wabtInit from 'wabt';
import { writeU32 } from '../../src/wasm/module-limits.ts';

const IMPORTS = `
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))`;

/** Writes `len` bytes at `ptr` to fd 1 (iovec at 0). */
const WRITE = `
  (func $write (param $fd i32) (param $ptr i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 8))))`;

function command(body: string, extra = '', memory = '(memory (export "memory") 1 16)'): string {
  return `(module ${IMPORTS} ${extra} ${memory} ${WRITE}
    (func (export "_start") ${body}))`;
}

export const WAT = {
  /** Copies stdin (the envelope) to stdout: the result is {arguments, idempotency_key}. */
  echo: command(`
    (local $n i32) (local $got i32)
    (loop $more
      (i32.store (i32.const 16) (i32.add (i32.const 1024) (local.get $n)))
      (i32.store (i32.const 20) (i32.sub (i32.const 60000) (local.get $n)))
      (drop (call $fd_read (i32.const 0) (i32.const 16) (i32.const 1) (i32.const 24)))
      (local.set $got (i32.load (i32.const 24)))
      (local.set $n (i32.add (local.get $n) (local.get $got)))
      (br_if $more (i32.ne (local.get $got) (i32.const 0))))
    (call $write (i32.const 1) (i32.const 1024) (local.get $n))`),
  /** A trivial tool: ignores its input, answers {"ok":1}. */
  trivial: command(
    `(call $write (i32.const 1) (i32.const 64) (i32.const 8))`,
    '',
    `(memory (export "memory") 1 1) (data (i32.const 64) "{\\"ok\\":1}")`,
  ),
  unreachable: command('unreachable'),
  loop: command('(loop $spin (br $spin))'),
  /** An endless loop of host calls. */
  hostLoop: command(
    '(loop $spin (drop (call $clock (i32.const 1) (i64.const 0) (i32.const 32))) (br $spin))',
    '(import "wasi_snapshot_preview1" "clock_time_get" (func $clock (param i32 i64 i32) (result i32)))',
  ),
  /** One host call that would block for 60 s (poll_oneoff on a clock). */
  sleep: command(
    `(i64.store (i32.const 24) (i64.const 60000000000))
     (drop (call $poll (i32.const 0) (i32.const 100) (i32.const 1) (i32.const 200)))`,
    '(import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))',
  ),
  /** Reads stdin forever (0 bytes at EOF, again and again). */
  stdinForever: command(`
    (loop $more
      (i32.store (i32.const 16) (i32.const 1024))
      (i32.store (i32.const 20) (i32.const 4096))
      (drop (call $fd_read (i32.const 0) (i32.const 16) (i32.const 1) (i32.const 24)))
      (br $more))`),
  /** Grows 16 pages at a time, touching each new page; traps when grow fails. */
  grow: command(
    `(local $pages i32)
     (loop $more
       (local.set $pages (memory.grow (i32.const 16)))
       (if (i32.eq (local.get $pages) (i32.const -1)) (then unreachable))
       (i32.store (i32.mul (local.get $pages) (i32.const 65536)) (i32.const 1))
       (br $more))`,
    '',
    '(memory (export "memory") 1 65536)',
  ),
  /** The same without any memory maximum: capped at registration anyway. */
  growNoMax: command(
    `(local $pages i32)
     (loop $more
       (local.set $pages (memory.grow (i32.const 16)))
       (if (i32.eq (local.get $pages) (i32.const -1)) (then unreachable))
       (i32.store (i32.mul (local.get $pages) (i32.const 65536)) (i32.const 1))
       (br $more))`,
    '',
    '(memory (export "memory") 1)',
  ),
  /**
   * The attacker's module: `_start` grows a funcref table without a maximum forever,
   * ignoring failures. Before tables were capped it aborted the whole process.
   */
  tableGrowFuncref: command(
    '(loop $more (drop (table.grow $t (ref.null func) (i32.const 65536))) (br $more))',
    '(table $t 0 funcref)',
    '(memory (export "memory") 1 1)',
  ),
  /** The same with an externref table. */
  tableGrowExternref: command(
    '(loop $more (drop (table.grow $t (ref.null extern) (i32.const 65536))) (br $more))',
    '(table $t 0 externref)',
    '(memory (export "memory") 1 1)',
  ),
  /** Grows a table until it cannot, then prints the size it reached as a JSON number. */
  tableSize: command(
    `(loop $more (br_if $more (i32.ne (table.grow $t (ref.null func) (i32.const 1000)) (i32.const -1))))
     (call $number (table.size $t))`,
    `(table $t 10 funcref)
     (func $number (param $n i32) (local $at i32)
       (local.set $at (i32.const 200))
       (loop $digit
         (local.set $at (i32.sub (local.get $at) (i32.const 1)))
         (i32.store8 (local.get $at) (i32.add (i32.const 48) (i32.rem_u (local.get $n) (i32.const 10))))
         (local.set $n (i32.div_u (local.get $n) (i32.const 10)))
         (br_if $digit (i32.ne (local.get $n) (i32.const 0))))
       (call $write (i32.const 1) (local.get $at) (i32.sub (i32.const 200) (local.get $at))))`,
  ),
  /** Two tables that start with 60 000 elements each: refused at registration. */
  bigTables: command('', '(table 60000 funcref) (table 60000 externref)'),
  /** Prints "[[],[],…,0]", 8 388 483 bytes: more objects than a worker's heap can parse. */
  nestedOutput: command(
    `(local $i i32)
     (loop $fill
       (i32.store8 (i32.add (i32.const 1024) (local.get $i)) (i32.const 91))
       (i32.store8 (i32.add (i32.const 1025) (local.get $i)) (i32.const 93))
       (i32.store8 (i32.add (i32.const 1026) (local.get $i)) (i32.const 44))
       (local.set $i (i32.add (local.get $i) (i32.const 3)))
       (br_if $fill (i32.lt_u (local.get $i) (i32.const 65535))))
     (call $write (i32.const 1) (i32.const 64) (i32.const 1))
     (local.set $i (i32.const 0))
     (loop $chunks
       (call $write (i32.const 1) (i32.const 1024) (i32.const 65535))
       (local.set $i (i32.add (local.get $i) (i32.const 1)))
       (br_if $chunks (i32.lt_u (local.get $i) (i32.const 128))))
     (call $write (i32.const 1) (i32.const 65) (i32.const 2))`,
    '(data (i32.const 64) "[0]")',
    '(memory (export "memory") 2 2)',
  ),
  /** Writes one byte at a time, forever. */
  byteWrites: command(
    '(loop $more (call $write (i32.const 1) (i32.const 64) (i32.const 1)) (br $more))',
  ),
  /** Recurses without end: a stack overflow. */
  recurse: command('(call $down)', '(func $down (call $down))'),
  /** Writes 64 KiB chunks forever, ignoring every error: 100 MB and more. */
  flood: command(`
    (loop $more (call $write (i32.const 1) (i32.const 0) (i32.const 65536)) (br $more))`),
  /** Tries path_open and sock_accept; prints the two errnos as JSON. */
  probe: command(
    `(i32.store (i32.const 100) (i32.const 0x6374652f))
     (call $digits (i32.const 594) (call $path_open (i32.const 3) (i32.const 0) (i32.const 100)
       (i32.const 4) (i32.const 0) (i64.const -1) (i64.const -1) (i32.const 0) (i32.const 104)))
     (call $digits (i32.const 613) (call $sock_accept (i32.const 0) (i32.const 0) (i32.const 104)))
     (call $write (i32.const 1) (i32.const 580) (i32.const 36))`,
    `(import "wasi_snapshot_preview1" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
     (import "wasi_snapshot_preview1" "sock_accept" (func $sock_accept (param i32 i32 i32) (result i32)))
     (data (i32.const 580) "{\\"path_open\\": 00, \\"sock_accept\\": 00}")
     (func $digits (param $at i32) (param $n i32)
       (i32.store8 (local.get $at) (i32.add (i32.const 48) (i32.div_u (local.get $n) (i32.const 10))))
       (i32.store8 (i32.add (local.get $at) (i32.const 1))
         (i32.add (i32.const 48) (i32.rem_u (local.get $n) (i32.const 10)))))`,
  ),
  /** Says why on stderr, then exits with 3. */
  exit3: command(
    '(call $write (i32.const 2) (i32.const 64) (i32.const 9)) (call $proc_exit (i32.const 3))',
    '(data (i32.const 64) "bad thing")',
  ),
  garbage: command(
    '(call $write (i32.const 1) (i32.const 64) (i32.const 10))',
    '(data (i32.const 64) "not json {")',
  ),
  /** Imports something that is not WASI: refused at registration. */
  foreignImport: command('(call $foo)', '(import "env" "foo" (func $foo))'),
  /** A reactor (no _start): refused at registration. */
  reactor: `(module (memory (export "memory") 1) (func (export "_initialize")))`,
} as const;

export type WatName = keyof typeof WAT;

/** Builds every WAT module (one wabt instance). */
export async function buildModules(): Promise<Record<WatName, Uint8Array>> {
  const wabt = await wabtInit();
  const built = {} as Record<WatName, Uint8Array>;
  for (const [name, text] of Object.entries(WAT) as [WatName, string][]) {
    const parsed = wabt.parseWat(`${name}.wat`, text);
    parsed.resolveNames();
    parsed.validate();
    built[name] = new Uint8Array(parsed.toBinary({}).buffer);
    parsed.destroy();
  }
  return built;
}

function section(id: number, body: number[] | Uint8Array): Uint8Array {
  const head = [id, ...writeU32(body.length)];
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  return out;
}

/**
 * A command module (one function, a 10-element funcref table, one page of memory) with
 * one element segment of `elements` references to its function: `passive` (flags 1), or
 * `active` at offset 0 of the table (flags 0, more elements than the table holds: V8
 * compiles it and refuses only at instantiation). Built as bytes: wabt would need the
 * elements spelled out one by one in the text.
 */
export function elementSegmentModule(kind: 'passive' | 'active', elements: number): Uint8Array {
  const head = kind === 'passive' ? [1, 1, 0x00] : [1, 0, 0x41, 0, 0x0b];
  const segment = new Uint8Array(head.length + writeU32(elements).length + elements);
  segment.set([...head, ...writeU32(elements)]); // the function indices are all 0
  const exports = [2, 6, ...Buffer.from('_start'), 0, 0, 6, ...Buffer.from('memory'), 2, 0];
  const sections = [
    section(1, [1, 0x60, 0, 0]), // type: () -> ()
    section(3, [1, 0]), // function 0 of type 0
    section(4, [1, 0x70, 0, 10]), // a funcref table of 10
    section(5, [1, 0, 1]), // one page of memory
    section(7, exports),
    section(9, segment),
    section(10, [1, 2, 0, 0x0b]), // _start: nothing
  ];
  const out = new Uint8Array(8 + sections.reduce((sum, part) => sum + part.length, 0));
  out.set([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]);
  let at = 8;
  for (const part of sections) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
