// `npm run bench -- telemetry`: what tracing costs a turn. Two keels in one process
// (fixture model in process, SQLite, durability "process", no HTTP), one without
// `[telemetry]` and one exporting to a loopback OTLP/HTTP receiver in the same process;
// turns alternate between them so both see the same machine load. One turn = one tool
// round (two model steps, one tool call: 6 spans with the run span). Reports the median and p99 turn time
// of each and the spans the receiver decoded (docs/telemetry.md, docs/benchmarks.md).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import type { Keel } from '../src/main.ts';
import { startKeel } from '../src/main.ts';
import { enqueueTurn } from '../src/runtime/enqueue.ts';
import { waitForRun } from '../src/runtime/wait.ts';
import { startOtlpReceiver } from '../test/helpers/otlp-receiver.ts';
import { agentSpec } from '../test/helpers/agent-spec.ts';
import { formatTable, median, nowMs, percentile, writeResult } from './support.ts';

const WARMUP = 20;
const TURNS = 200;
const TEXT = 'what time is it?\n@call clock_now {}';

async function startBenchKeel(dir: string, toml: string): Promise<Keel> {
  mkdirSync(dir, { recursive: true });
  const configPath = join(dir, 'keel.toml');
  writeFileSync(configPath, toml);
  const config = loadConfig({ config: configPath, data_dir: dir, listen: '127.0.0.1:0' }, {}, dir);
  const keel = await startKeel(
    { ...config, store: { ...config.store, durability: 'process' } },
    { logger: pino({ level: 'silent' }) },
  );
  await keel.store.createTenant('bench', {});
  await keel.store.putAgent('bench', 'agent', agentSpec({ model: 'fixture/bench' }));
  return keel;
}

async function turn(keel: Keel, i: number): Promise<number> {
  const started = nowMs();
  const { run } = await enqueueTurn(keel.store, {
    tenant: 'bench',
    agent: 'agent',
    scope: `s${i}`,
    payload: { text: TEXT },
  });
  const done = await waitForRun(keel.store, 'bench', run.run_id, 30_000);
  if (done?.run.status !== 'succeeded') throw new Error(`turn ${i} ended ${done?.run.status}`);
  return nowMs() - started;
}

export async function runTelemetryBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-bench-telemetry-'));
  const receiver = await startOtlpReceiver();
  const memory = '[memory]\nembedder = "hash"\n';
  const off = await startBenchKeel(join(dir, 'off'), memory);
  const on = await startBenchKeel(
    join(dir, 'on'),
    `${memory}[telemetry]\notlp_endpoint = "${receiver.url}/v1/traces"\nexport_delay_ms = 200\n`,
  );
  const times = { off: [] as number[], on: [] as number[] };
  try {
    for (let i = 0; i < WARMUP + TURNS; i++) {
      const offMs = await turn(off, i);
      const onMs = await turn(on, i);
      if (i >= WARMUP) {
        times.off.push(offMs);
        times.on.push(onMs);
      }
    }
  } finally {
    await off.stop();
    await on.stop(); // flushes the exporter
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const rows = (['off', 'on'] as const).map((mode) => [
    mode,
    median(times[mode]),
    percentile(times[mode], 0.99),
  ]);
  const delta = median(times.on) - median(times.off);
  console.log(`\ntelemetry: one turn with one tool round, ${TURNS} turns per mode, alternating\n`);
  console.log(formatTable(['tracing', 'turn median ms', 'turn p99 ms'], rows));
  console.log(
    `\nmedian delta ${delta.toFixed(3)} ms per turn; receiver decoded ${receiver.spans.length} spans (${TURNS + WARMUP} turns × 6 expected)`,
  );
  const results = {
    turns: TURNS,
    off: { median_ms: median(times.off), p99_ms: percentile(times.off, 0.99) },
    on: { median_ms: median(times.on), p99_ms: percentile(times.on, 0.99) },
    median_delta_ms: delta,
    spans_received: receiver.spans.length,
  };
  console.log(`wrote ${writeResult('telemetry', results)}`);
}
