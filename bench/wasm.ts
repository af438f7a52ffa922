// `npm run bench -- wasm`: the cost of a WebAssembly tool call through keel's sandbox
// pool (src/wasm: fresh instance + WASI shim in a worker thread, postMessage both ways)
// for a trivial module (WAT, answers {"ok":1}) and for the AssemblyScript example
// (examples/wasm-tools/words.ts, parses the envelope and counts words), beside a plain
// JS function doing the same work in this thread, in the same run. Also the first call
// of a module right after registration (check + compile + first run in a warm pool).
// Targets (issue 15): warm p50 ≤ 1 ms, ≥ 1,000 calls/s, first call ≤ 50 ms.

import { prepareModule } from '../src/wasm/module-check.ts';
import type { SandboxJob } from '../src/wasm/pool.ts';
import { createWasmPool, defaultPoolSize } from '../src/wasm/pool.ts';
import { buildModules } from '../test/helpers/wasm-modules.ts';
import { buildWordsExample } from '../test/helpers/wasm-example.ts';
import { formatTable, median, nowMs, percentile, writeResult } from './support.ts';

const CALLS = Number(process.env.KEEL_BENCH_WASM_CALLS ?? 2000);
const WARMUP = 100;
const TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(8);

function wordsInJs(input: Buffer): string {
  const envelope = JSON.parse(input.toString('utf8')) as { arguments: { text: string } };
  const text = envelope.arguments.text;
  let words = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const space = c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
    if (!space && !inWord) words++;
    inWord = !space;
  }
  return JSON.stringify({ words, characters: text.length });
}

function trivialInJs(input: Buffer): string {
  JSON.parse(input.toString('utf8'));
  return JSON.stringify({ ok: 1 });
}

export async function runWasmBench(): Promise<void> {
  const size = defaultPoolSize();
  // One tenant using the whole pool: the pool's throughput, not its fairness.
  const pool = createWasmPool({ size, maxPerTenant: size });
  const [wat, words] = await Promise.all([buildModules(), buildWordsExample()]);
  const input = Buffer.from(
    JSON.stringify({ arguments: { text: TEXT }, idempotency_key: 'bench:1' }),
  );
  const job = (module: WebAssembly.Module): SandboxJob => ({
    tenant: 'bench',
    module,
    input,
    maxOutputBytes: 65_536,
    memoryLimitBytes: 64 * 1_048_576,
    timeoutMs: 5_000,
    deadline: Date.now() + 60_000,
    signal: new AbortController().signal,
  });
  // Warm the pool on an unrelated module, so "first call" measures the module alone.
  const echo = (await prepareModule(wat.echo, 64)).module;
  await Promise.all(Array.from({ length: size * 4 }, () => pool.run(job(echo))));

  const subjects = [
    { name: 'trivial (WAT)', bytes: wat.trivial, js: trivialInJs },
    { name: 'words (AssemblyScript)', bytes: words, js: wordsInJs },
  ];
  const rows: (string | number)[][] = [];
  const result: Record<string, unknown> = { calls: CALLS, pool_size: size };
  for (const subject of subjects) {
    const firstStart = nowMs();
    const { module } = await prepareModule(subject.bytes, 64);
    const first = await pool.run(job(module));
    const firstMs = nowMs() - firstStart;
    if (!first.ok) throw new Error(`${subject.name}: ${JSON.stringify(first)}`);

    const latencies: number[] = [];
    for (let i = 0; i < WARMUP + CALLS; i++) {
      const start = nowMs();
      const answer = await pool.run(job(module));
      if (!answer.ok) throw new Error(`${subject.name}: ${JSON.stringify(answer)}`);
      if (i >= WARMUP) latencies.push(nowMs() - start);
    }
    // Throughput: two calls in flight per worker.
    const flightStart = nowMs();
    let next = 0;
    await Promise.all(
      Array.from({ length: size * 2 }, async () => {
        while (next++ < CALLS) await pool.run(job(module));
      }),
    );
    const perSecond = CALLS / ((nowMs() - flightStart) / 1000);

    const jsLatencies: number[] = [];
    for (let i = 0; i < WARMUP + CALLS; i++) {
      const start = nowMs();
      subject.js(input);
      if (i >= WARMUP) jsLatencies.push(nowMs() - start);
    }
    const jsStart = nowMs();
    for (let i = 0; i < CALLS; i++) subject.js(input);
    const jsPerSecond = CALLS / ((nowMs() - jsStart) / 1000);

    rows.push([
      subject.name,
      subject.bytes.byteLength,
      firstMs,
      median(latencies),
      percentile(latencies, 0.99),
      Math.round(perSecond),
      median(jsLatencies),
      Math.round(jsPerSecond),
    ]);
    result[subject.name] = {
      module_bytes: subject.bytes.byteLength,
      first_call_ms: firstMs,
      warm_p50_ms: median(latencies),
      warm_p99_ms: percentile(latencies, 0.99),
      calls_per_s: perSecond,
      js_p50_ms: median(jsLatencies),
      js_calls_per_s: jsPerSecond,
    };
  }
  await pool.close();
  console.log(
    formatTable(
      [
        'module',
        'bytes',
        'first call ms',
        'warm p50 ms',
        'warm p99 ms',
        'calls/s',
        'JS p50 ms',
        'JS calls/s',
      ],
      rows,
    ),
  );
  console.log(`wrote ${writeResult('wasm', result)}`);
}
