// What a module can grow, and what the pool does when a worker dies or a tenant floods
// it (docs/wasm-tools.md, "Resource limits"; docs/reliability.md, "WebAssembly
// resources"). The attacker's `_start` looping `table.grow` aborted the whole process
// before tables were capped: here it is a tool error and the process goes on.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import wabtInit from 'wabt';
import { isKeelError } from '../src/errors.ts';
import { prepareModule } from '../src/wasm/module-check.ts';
import {
  MAX_ELEMENT_SEGMENT_ELEMENTS,
  MAX_TABLE_ELEMENTS,
  capResources,
} from '../src/wasm/module-limits.ts';
import { createCompiledModules } from '../src/wasm/modules.ts';
import type { SandboxResult, WasmPool } from '../src/wasm/pool.ts';
import { createWasmPool } from '../src/wasm/pool.ts';
import type { WatName } from './helpers/wasm-modules.ts';
import { buildModules, elementSegmentModule } from './helpers/wasm-modules.ts';

const LIMIT_MB = 16;
let built: Record<WatName, Uint8Array>;
const compiled = new Map<WatName, WebAssembly.Module>();

async function module(name: WatName): Promise<WebAssembly.Module> {
  const known = compiled.get(name);
  if (known) return known;
  const prepared = (await prepareModule(built[name], LIMIT_MB)).module;
  compiled.set(name, prepared);
  return prepared;
}

async function call(
  pool: WasmPool,
  name: WatName,
  options: { tenant?: string; timeoutMs?: number; maxOutputBytes?: number } = {},
): Promise<SandboxResult & { ms: number }> {
  const started = performance.now();
  const result = await pool.run({
    tenant: options.tenant ?? 'acme',
    module: await module(name),
    input: Buffer.from('{"arguments": {}, "idempotency_key": "run:call"}'),
    maxOutputBytes: options.maxOutputBytes ?? 1_048_576,
    memoryLimitBytes: LIMIT_MB * 1_048_576,
    timeoutMs: options.timeoutMs ?? 1_000,
    deadline: Date.now() + 60_000,
    signal: new AbortController().signal,
  });
  return { ...result, ms: performance.now() - started };
}

function codeOf(result: SandboxResult): string {
  return result.ok ? 'ok' : result.code;
}

function tablesOf(wabt: Awaited<ReturnType<typeof wabtInit>>, bytes: Uint8Array): string[] {
  const read = wabt.readWasm(bytes, {});
  const text = read.toText({});
  read.destroy();
  return [...text.matchAll(/\(table \(;\d+;\) ([^)]*)\)/g)].map((match) => match[1] as string);
}

before(async () => {
  built = await buildModules();
});

describe('registration: tables', () => {
  it('rewrites table maxima within the cap; refuses tables that start over it', async () => {
    const wabt = await wabtInit();
    assert.deepEqual(tablesOf(wabt, built.tableGrowFuncref), ['0 funcref']);
    assert.deepEqual(tablesOf(wabt, capResources(built.tableGrowFuncref, 16)), [
      `0 ${MAX_TABLE_ELEMENTS} funcref`,
    ]);
    assert.deepEqual(tablesOf(wabt, capResources(built.tableGrowExternref, 16)), [
      `0 ${MAX_TABLE_ELEMENTS} externref`,
    ]);
    // Two tables share the cap: the first takes the headroom, the second keeps its size.
    const two = wabt.parseWat(
      'two.wat',
      `(module (table 10 funcref) (table 5 20 externref) (memory (export "memory") 1)
         (func (export "_start")))`,
    );
    const twoBytes = new Uint8Array(two.toBinary({}).buffer);
    two.destroy();
    assert.deepEqual(tablesOf(wabt, capResources(twoBytes, 16)), [
      `10 ${MAX_TABLE_ELEMENTS - 5} funcref`,
      '5 5 externref',
    ]);
    await assert.rejects(prepareModule(built.bigTables, LIMIT_MB), (error: unknown) => {
      assert.ok(isKeelError(error, 'WASM_MODULE_INVALID'), String(error));
      assert.deepEqual(error.details, { field: 'module' });
      assert.match(error.message, /tables start with 120000 elements; at most 100000/);
      return true;
    });
  });

  it('counts the elements of all element segments: a huge passive or active one is refused', async () => {
    // Within the budget: accepted, and compiled.
    for (const kind of ['passive', 'active'] as const) {
      await prepareModule(elementSegmentModule(kind, 10), LIMIT_MB);
    }
    const lines: string[] = [];
    for (const [kind, elements] of [
      ['passive', 5_000_000],
      ['active', 1_000_000],
      ['passive', MAX_ELEMENT_SEGMENT_ELEMENTS + 1],
    ] as const) {
      const bytes = elementSegmentModule(kind, elements);
      // V8 itself compiles it: only keel's count refuses it.
      await WebAssembly.compile(bytes);
      const started = performance.now();
      await assert.rejects(prepareModule(bytes, LIMIT_MB), (error: unknown) => {
        assert.ok(isKeelError(error, 'WASM_MODULE_INVALID'), String(error));
        assert.deepEqual(error.details, { field: 'module' });
        assert.match(
          error.message,
          new RegExp(
            `^module: element segment 0 brings .* to ${elements} elements; at most 100000`,
          ),
        );
        return true;
      });
      lines.push(`${kind} ${elements}: refused in ${(performance.now() - started).toFixed(0)} ms`);
    }
    console.log(`element segments (${lines.join(', ')})`);
  });

  it('capping is idempotent: a module stored capped is the same bytes when loaded', () => {
    for (const [name, bytes] of Object.entries(built)) {
      if (name === 'bigTables' || name === 'reactor') continue;
      const capped = capResources(bytes, 16);
      assert.deepEqual(capResources(capped, 16), capped, name);
    }
  });

  it('a module stored without the caps is capped, or refused, when loaded for a call', async () => {
    const manifest = { memory_limit_mb: LIMIT_MB };
    const stored = new Map([
      ['big', built.bigTables],
      ['elements', elementSegmentModule('passive', 5_000_000)],
      ['grow', built.tableGrowFuncref],
    ]);
    const modules = createCompiledModules({
      async getWasmTool(tenant, name) {
        const module = stored.get(name) as Uint8Array;
        return { tenant, name, sha256: name, manifest, module } as never;
      },
    });
    for (const name of ['big', 'elements']) {
      await assert.rejects(modules.load('acme', name, name), (error: unknown) => {
        assert.ok(isKeelError(error, 'WASM_MODULE_INVALID'), `${name}: ${String(error)}`);
        return true;
      });
    }
    assert.ok((await modules.load('acme', 'grow', 'grow')) instanceof WebAssembly.Module);
  });

  it('refuses wasm-GC types, shared or 64-bit tables and memories', () => {
    const header = [0, 0x61, 0x73, 0x6d, 1, 0, 0, 0];
    const memory = [5, 3, 1, 0, 1];
    const cases: [number[], RegExp][] = [
      // type section: one array type (0x5e) of mutable i32
      [[1, 4, 1, 0x5e, 0x7f, 1], /type 0 is not a function type/],
      // table section: one funcref table with 64-bit limits (flags 4)
      [[4, 4, 1, 0x70, 4, 0], /shared or 64-bit tables/],
      // memory section: a 64-bit memory (flags 4)
      [[5, 3, 1, 4, 1], /shared or 64-bit memories/],
    ];
    for (const [section, pattern] of cases) {
      const bytes = new Uint8Array([...header, ...section, ...(section[0] === 5 ? [] : memory)]);
      assert.throws(
        () => capResources(bytes, 16),
        (error: unknown) =>
          isKeelError(error, 'WASM_MODULE_INVALID') && pattern.test(error.message),
      );
    }
  });
});

describe('the pool', () => {
  let pool: WasmPool;
  before(() => {
    pool = createWasmPool({ size: 2, maxPerTenant: 2 });
  });
  after(async () => {
    await pool.close();
  });

  it("the attacker's table.grow loops end as a tool error; the process stays up", async () => {
    const rssBefore = process.memoryUsage().rss;
    const lines: string[] = [];
    for (const name of ['tableGrowFuncref', 'tableGrowExternref'] as const) {
      const result = await call(pool, name, { timeoutMs: 500 });
      lines.push(`${name}=${codeOf(result)} ${result.ms.toFixed(0)}ms`);
      assert.equal(codeOf(result), 'WASM_TIMEOUT', `${name}: ${JSON.stringify(result)}`);
    }
    // Growth stops at the cap: table.grow answers -1 past it.
    const size = await call(pool, 'tableSize');
    assert.equal(size.ok && size.value, 99_010, JSON.stringify(size));
    // A stack overflow is a trap, not a dead worker.
    const recurse = await call(pool, 'recurse');
    assert.equal(codeOf(recurse), 'WASM_TRAP', JSON.stringify(recurse));
    assert.match(recurse.ok ? '' : recurse.message, /call stack/);
    const rssMb = (process.memoryUsage().rss - rssBefore) / 1_048_576;
    console.log(
      `${lines.join(', ')}; tableSize reached ${size.ok && size.value} elements; ` +
        `recurse=${codeOf(recurse)}; process rss +${rssMb.toFixed(1)} MB`,
    );
  });

  it('a worker that dies (its heap limit) is WASM_CRASHED, replaced; the next call answers', async () => {
    const replacedBefore = pool.stats().replaced;
    // 8 MiB of "[[],[],…]" on stdout: parsing it needs more than the worker's heap.
    const dead = await call(pool, 'nestedOutput', { maxOutputBytes: 8_388_608, timeoutMs: 20_000 });
    assert.equal(codeOf(dead), 'WASM_CRASHED', JSON.stringify(dead));
    assert.match(dead.ok ? '' : dead.message, /memory limit/);
    assert.equal(pool.stats().replaced - replacedBefore, 1);
    const echo = await call(pool, 'echo');
    assert.equal(codeOf(echo), 'ok');
    // One byte per write up to the cap costs the shim one buffer, not an object per write.
    const bytes = await call(pool, 'byteWrites', { maxOutputBytes: 2_000_000, timeoutMs: 20_000 });
    assert.equal(codeOf(bytes), 'WASM_OUTPUT_TOO_LARGE', JSON.stringify(bytes));
    console.log(
      `nestedOutput=${codeOf(dead)} in ${dead.ms.toFixed(0)} ms (${dead.ok ? '' : dead.message}); ` +
        `echo after=${codeOf(echo)}; 2 MB of 1-byte writes=${codeOf(bytes)} in ${bytes.ms.toFixed(0)} ms`,
    );
  });
});

describe('tenants share the pool', () => {
  it('tenant A floods slow calls; tenant B still gets a worker at once', async () => {
    // Two workers, the default share: one each. Ordinal, not timed (the machine may be
    // loaded): A's six calls take 800 ms each on its one worker, one after another, so
    // B's call finishes before A's second; without the share B queued behind all six.
    const pool = createWasmPool({ size: 2 });
    try {
      await call(pool, 'echo');
      const finished: string[] = [];
      const floodStarted = performance.now();
      const flood = Array.from({ length: 6 }, (_, index) =>
        call(pool, 'loop', { tenant: 'a', timeoutMs: 800 }).then((result) => {
          finished.push(`a${index + 1}`);
          return result;
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      const b = await call(pool, 'echo', { tenant: 'b' });
      finished.push('b');
      const results = await Promise.all(flood);
      const drainedMs = performance.now() - floodStarted;
      const before = finished.indexOf('b');
      console.log(
        `tenant B's call: ${codeOf(b)} in ${b.ms.toFixed(0)} ms, after ${before} of A's calls; ` +
          `tenant A's 6 slow calls drained in ${drainedMs.toFixed(0)} ms (order ${finished.join(' ')})`,
      );
      assert.equal(codeOf(b), 'ok');
      assert.ok(results.every((result) => codeOf(result) === 'WASM_TIMEOUT'));
      assert.ok(before <= 1, `B finished after ${before} of A's calls: ${finished.join(' ')}`);
    } finally {
      await pool.close();
    }
  });
});
