// The sandbox itself (src/wasm): the registration check, and each hostile module of
// docs/wasm-tools.md's failure table run through keel's WASI shim in the worker pool —
// each ends with its own code, the host never throws, a worker stuck past the deadline
// is replaced, the abort signal stops a call, and 1,000 hostile calls in a row leave the
// process's RSS where it was.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import wabtInit from 'wabt';
import { isKeelError } from '../src/errors.ts';
import { prepareModule } from '../src/wasm/module-check.ts';
import { capResources } from '../src/wasm/module-limits.ts';
import type { SandboxResult, WasmPool } from '../src/wasm/pool.ts';
import { createWasmPool } from '../src/wasm/pool.ts';
import type { WatName } from './helpers/wasm-modules.ts';
import { buildModules } from './helpers/wasm-modules.ts';

const LIMIT_MB = 16;
let built: Record<WatName, Uint8Array>;
const compiled = new Map<WatName, WebAssembly.Module>();
let pool: WasmPool;

async function call(
  name: WatName,
  options: { timeoutMs?: number; signal?: AbortSignal; maxOutputBytes?: number } = {},
): Promise<SandboxResult & { ms: number }> {
  const started = performance.now();
  const result = await pool.run({
    tenant: 'acme',
    module: compiled.get(name) as WebAssembly.Module,
    input: Buffer.from(JSON.stringify({ arguments: { n: 1 }, idempotency_key: 'run:call' })),
    maxOutputBytes: options.maxOutputBytes ?? 1_048_576,
    memoryLimitBytes: LIMIT_MB * 1_048_576,
    timeoutMs: options.timeoutMs ?? 500,
    deadline: Date.now() + 30_000,
    signal: options.signal ?? new AbortController().signal,
  });
  return { ...result, ms: performance.now() - started };
}

function codeOf(result: SandboxResult): string {
  return result.ok ? 'ok' : result.code;
}

before(async () => {
  built = await buildModules();
  for (const name of Object.keys(built) as WatName[]) {
    if (name === 'foreignImport' || name === 'reactor' || name === 'bigTables') continue;
    compiled.set(name, (await prepareModule(built[name], LIMIT_MB)).module);
  }
  // One tenant may use both workers here: the share between tenants is wasm-resources.test.ts's.
  pool = createWasmPool({ size: 2, maxPerTenant: 2 });
});

after(async () => {
  await pool.close();
});

describe('registration check', () => {
  it('refuses a module importing something other than WASI, and a reactor', async () => {
    for (const [name, pattern] of [
      ['foreignImport', /imports function env\.foo/],
      ['reactor', /no _start/],
    ] as const) {
      await assert.rejects(prepareModule(built[name], LIMIT_MB), (error: unknown) => {
        assert.ok(isKeelError(error, 'WASM_MODULE_INVALID'), String(error));
        assert.match(error.message, pattern);
        return true;
      });
    }
    await assert.rejects(prepareModule(new Uint8Array([0, 97, 115, 109, 9, 9]), 1), /compile/);
  });

  it('rewrites the memory maximum to the limit (none, or a larger one, before)', async () => {
    const wabt = await wabtInit();
    const memoryOf = (bytes: Uint8Array) => {
      const read = wabt.readWasm(bytes, {});
      const text = read.toText({});
      read.destroy();
      return /\(memory \(;0;\) ([^)]*)\)/.exec(text)?.[1];
    };
    assert.equal(memoryOf(built.growNoMax), '1');
    assert.equal(memoryOf(built.grow), '1 65536');
    assert.equal(memoryOf(capResources(built.growNoMax, 256)), '1 256');
    assert.equal(memoryOf(capResources(built.grow, 256)), '1 256');
    // A smaller maximum of the module's own is kept.
    assert.equal(memoryOf(capResources(built.echo, 256)), '1 16');
    // An initial size over the limit is refused.
    assert.throws(() => capResources(built.echo, 0), /over memory_limit_mb/);
  });
});

describe('hostile modules', () => {
  it('each failure gives its own code, and the well-behaved modules answer', async () => {
    const expected: [WatName, string, RegExp?][] = [
      ['echo', 'ok'],
      ['unreachable', 'WASM_TRAP', /unreachable/],
      ['exit3', 'WASM_EXIT_NONZERO', /exit code 3: bad thing/],
      ['garbage', 'WASM_BAD_OUTPUT', /not JSON/],
      ['flood', 'WASM_OUTPUT_TOO_LARGE'],
      ['grow', 'WASM_MEMORY_LIMIT'],
      ['growNoMax', 'WASM_MEMORY_LIMIT'],
      ['loop', 'WASM_TIMEOUT'],
      ['hostLoop', 'WASM_TIMEOUT'],
      ['sleep', 'WASM_TIMEOUT'],
      ['stdinForever', 'WASM_TIMEOUT'],
      ['probe', 'ok'],
    ];
    const lines: string[] = [];
    for (const [name, code, message] of expected) {
      const result = await call(name, { timeoutMs: 300 });
      lines.push(`${name}=${codeOf(result)} ${result.ms.toFixed(1)}ms`);
      assert.equal(codeOf(result), code, `${name}: ${JSON.stringify(result)}`);
      if (message && !result.ok) assert.match(result.message, message);
      // A timeout ends with the budget (plus the wait for a replaced worker on a loaded
      // machine), never when the guest gives up: the sleep alone would take 60 s.
      if (code === 'WASM_TIMEOUT') assert.ok(result.ms < 5_000, `${name}: ${result.ms} ms`);
    }
    console.log(`hostile: ${lines.join(', ')}`);
    const echo = await call('echo');
    assert.deepEqual(echo.ok && echo.value, {
      arguments: { n: 1 },
      idempotency_key: 'run:call',
    });
    // No file or socket: path_open is ENOTCAPABLE (76), sock_accept ENOSYS (52).
    const probe = await call('probe');
    assert.deepEqual(probe.ok && probe.value, { path_open: 76, sock_accept: 52 });
    // A pure wasm loop never reaches a host call, so only terminate() ends it.
    assert.ok(pool.stats().replaced >= 1, `replaced ${pool.stats().replaced}`);
  });

  it('the abort signal stops a running call and a queued one', async () => {
    const controller = new AbortController();
    const replacedBefore = pool.stats().replaced;
    const running = [call('loop', { timeoutMs: 10_000, signal: controller.signal })];
    running.push(call('loop', { timeoutMs: 10_000, signal: controller.signal }));
    const queued = call('loop', { timeoutMs: 10_000, signal: controller.signal });
    // Abort once both workers run a loop (a replaced worker may still be starting).
    const started = Date.now();
    while (pool.stats().busy < 2 && Date.now() - started < 20_000) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(pool.stats().queued, 1);
    controller.abort();
    const results = await Promise.all([...running, queued]);
    for (const result of results) {
      assert.equal(codeOf(result), 'ABORTED');
      assert.ok(result.ms < 20_000, `aborted after ${result.ms} ms`);
    }
    assert.equal(pool.stats().replaced - replacedBefore, 2, 'the two running workers replaced');
    assert.equal(codeOf(await call('echo')), 'ok');
  });

  it('1,000 hostile calls in a row: RSS back within 50 MB, a normal call still answers', async () => {
    // Mostly failures that end on their own; one timeout in 20 (each costs a new worker).
    const cycle: WatName[] = [
      ...Array.from(
        { length: 3 },
        () => ['unreachable', 'exit3', 'garbage', 'flood', 'grow', 'growNoMax'] as WatName[],
      ).flat(),
      'probe',
      'loop',
    ];
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const counts = new Map<string, number>();
    const started = performance.now();
    for (let i = 0; i < 1000; i++) {
      const name = cycle[i % cycle.length] as WatName;
      // Only the loop needs a short budget; the others end on their own.
      const result = await call(name, { timeoutMs: name === 'loop' ? 50 : 5_000 });
      counts.set(codeOf(result), (counts.get(codeOf(result)) ?? 0) + 1);
      if (i % 50 === 0) peak = Math.max(peak, process.memoryUsage().rss);
    }
    const seconds = (performance.now() - started) / 1000;
    global.gc?.();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const rssAfter = process.memoryUsage().rss;
    const mb = (bytes: number) => (bytes / 1_048_576).toFixed(1);
    console.log(
      `1000 hostile calls in ${seconds.toFixed(1)} s: ${JSON.stringify(Object.fromEntries(counts))}; ` +
        `rss before ${mb(rssBefore)} MB, peak ${mb(peak)} MB, after ${mb(rssAfter)} MB; ` +
        `workers replaced ${pool.stats().replaced}`,
    );
    assert.equal(counts.get('ok'), 50, 'the probe, between hostile calls');
    assert.equal(counts.get('WASM_TIMEOUT'), 50, 'only the loop times out');
    assert.ok(rssAfter - rssBefore < 50 * 1_048_576, `rss grew ${mb(rssAfter - rssBefore)} MB`);
    assert.equal(codeOf(await call('echo')), 'ok');
  });
});
