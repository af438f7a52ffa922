// `npm run bench -- stream-latency`: what a server adds to a streamed answer when many
// runs stream at once from a slow model. For each N (KEEL_BENCH_STREAMS, default 64 and
// 1000) and each contender — keel (`keel serve`, the default configuration, a client
// that submits with `follow` and reads the run's event stream), the LangGraph.js API
// server and Mastra (bench/peers, their streaming endpoints), and `direct`: the load
// process streaming from the model itself — a separate load process (stream-latency/
// load.ts) starts N streaming runs at once and times each run's first token and final
// answer. The model is the `keel fixture-model` server over HTTP, slowed: every answer
// waits FIRST_TOKEN_DELAY_MS (`@sleep`), then streams CHUNKS chunks CHUNK_DELAY_MS apart
// (`--chunk-delay-ms`). Added latency = a contender's percentile minus `direct`'s at the
// same N in the same round (the model's own delays, and the fixture server's own
// queueing at N streams, are in both). From /proc, the runner samples the server's RSS
// every 10 ms during the burst (peak minus the idle RSS before it, per run) and its CPU;
// a preload in every server (stream-latency/loop-delay.mjs, `node --import`) measures
// its event-loop delay. KEEL_BENCH_ROUNDS repeats the interleaved sequence.
//
// Every contender's process is started by `node` from NodeCommand (contenders.ts): the
// one running the bench, or with KEEL_BENCH_NODES=20,24 each server contender once on
// each Node (named "@node20", "@node24"; turns/node-runtimes.ts), the same servers.

import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import type { Child } from './turns/children.ts';
import { startChild, stopChild } from './turns/children.ts';
import {
  LOAD_ARGS,
  ROOT,
  cleanEnv,
  ensureBuilt,
  startFixtureModel,
  startKeelContender,
  type NodeCommand,
  type Running,
} from './turns/contenders.ts';
import { setUpKeel } from './turns/keel-setup.ts';
import { peersInstalled, startPeer } from './turns/peers.ts';
import { processTree, sampleProcs } from './turns/proc-stats.ts';
import type { NodeRuntime } from './turns/node-runtimes.ts';
import { parseBenchNodes, RUNNING_NODE } from './turns/node-runtimes.ts';
import type { StreamKind, StreamSpec } from './stream-latency/protocols.ts';
import { formatTable, median, percentile, writeResult } from './support.ts';

const FIRST_TOKEN_DELAY_MS = 500;
const CHUNK_DELAY_MS = 25;
const CHUNKS = 20;
// About 200 characters of answer ("echo: " and this text without the directives), in
// CHUNKS chunks of ~10: the first chunk holds "echo:", the last the final "omega".
const TEXT = [
  'latency probe: a slow model streams this answer back in twenty pieces while many other',
  'runs stream theirs at the same time, and the server in between adds what it adds omega',
  `@sleep ${FIRST_TOKEN_DELAY_MS}`,
  `@stream ${CHUNKS}`,
].join('\n');
/** At most this many runs measured per trial: N=64 runs 4 bursts one after another. */
const RUNS_PER_TRIAL = 256;
const WARMUP_RUNS = 256;
const WARMUP_INFLIGHT = 64;
const LOOP_DELAY_PRELOAD = pathToFileURL(join(ROOT, 'bench/stream-latency/loop-delay.mjs')).href;
const LOAD_SCRIPT = join(ROOT, 'bench/stream-latency/load.ts');
const LOAD_READY_TIMEOUT_MS = 20 * 60_000;
const BURST_TIMEOUT_MS = 10 * 60_000;

interface Trial {
  contender: string;
  streams: number;
  round: number;
  runs: number;
  errors: number;
  firstError: string | null;
  first: number[];
  final: number[];
  idleRssMiB: number;
  peakRssMiB: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  cpuMsPerRun: number;
}

interface Contender {
  label: string;
  kind: StreamKind;
  start(dir: string, streams: number, model: Child, command: NodeCommand): Promise<Running | null>;
}

/** KEEL_BENCH_ONLY=keel,mastra…: only those contenders (all when unset). */
function selected(label: string): boolean {
  const only = process.env.KEEL_BENCH_ONLY;
  return !only || only.split(',').includes(label);
}

const CONTENDERS: Contender[] = [
  { label: 'direct', kind: 'direct', start: async () => null },
  {
    label: 'keel',
    kind: 'keel',
    async start(dir, streams, model, command) {
      const running = await startKeelContender({
        ...command,
        dir,
        durability: 'full',
        // Every run of the burst is worked on at once (the peers have no queue either).
        concurrency: Math.max(64, streams),
        modelUrl: model.ready,
      });
      try {
        await setUpKeel(running.url, 'local/fixture');
      } catch (error) {
        await running.stop();
        throw error;
      }
      return running;
    },
  },
  {
    label: 'langgraph',
    kind: 'langgraph',
    start: (dir, streams, model, command) =>
      startPeer('langgraph', dir, model.ready, { ...command, workers: Math.max(64, streams) }),
  },
  {
    label: 'mastra',
    kind: 'mastra',
    start: (dir, _streams, model, command) => startPeer('mastra', dir, model.ready, command),
  },
];

function rssOf(pids: readonly number[]): number {
  return sampleProcs(pids).rssBytes;
}

/** The preload's figures after the `sequence`-th SIGUSR2 (loop-delay.mjs). */
async function loopDelay(
  pid: number,
  file: string,
  sequence: number,
): Promise<{ p99_ms: number; max_ms: number }> {
  process.kill(pid, 'SIGUSR2');
  for (let waited = 0; waited < 10_000; waited += 20) {
    if (existsSync(file)) {
      const figures = JSON.parse(readFileSync(file, 'utf8') || '{}') as {
        sequence?: number;
        p99_ms: number;
        max_ms: number;
      };
      if (figures.sequence === sequence) return figures;
    }
    await delay(20);
  }
  throw new Error(`the server wrote no event-loop figures to ${file}`);
}

async function trial(
  dir: string,
  contender: Contender,
  streams: number,
  round: number,
  model: Child,
  node: NodeRuntime,
): Promise<Trial> {
  const label = contender.label + node.suffix;
  const loopFile = join(dir, `loop-${label}-${streams}-${round}.json`);
  const command: NodeCommand = {
    node,
    nodeFlags: ['--import', LOOP_DELAY_PRELOAD],
    env: { BENCH_LOOP_DELAY_FILE: loopFile },
  };
  const running = await contender.start(
    mkdtempSync(join(dir, `${contender.label}-`)),
    streams,
    model,
    command,
  );
  const bursts = Math.max(1, Math.floor(RUNS_PER_TRIAL / streams));
  const spec: StreamSpec = {
    kind: contender.kind,
    url: running?.url ?? model.ready,
    runs: streams,
    warmup: WARMUP_RUNS,
    warmupInflight: WARMUP_INFLIGHT,
    bursts,
    text: TEXT,
  };
  let load: Child | null = null;
  try {
    load = await startChild(process.execPath, [...LOAD_ARGS, LOAD_SCRIPT, JSON.stringify(spec)], {
      env: cleanEnv(),
      cwd: ROOT,
      ready: /^(ready)$/m,
      stdin: true,
      readyTimeoutMs: LOAD_READY_TIMEOUT_MS,
    });
    const serverPids = running ? running.pids().flatMap((pid) => processTree(pid)) : [];
    const mainPid = running?.pids()[0];
    // Settle after the warm-up (its streams closing), then the idle figures.
    await delay(1000);
    const idleRss = rssOf(serverPids);
    const cpuBefore = sampleProcs(serverPids).cpuMs;
    if (mainPid !== undefined) await loopDelay(mainPid, loopFile, 1);

    const lines: string[] = [];
    let buffered = '';
    load.process.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      for (const part of parts) if (part.startsWith('{')) lines.push(part);
    });
    const first: number[] = [];
    const final: number[] = [];
    let errors = 0;
    let firstError: string | null = null;
    let peakRss = idleRss;
    for (let burst = 0; burst < bursts; burst++) {
      const sampler = setInterval(() => {
        peakRss = Math.max(peakRss, rssOf(serverPids));
      }, 10);
      const waitingFor = lines.length + 1;
      load.process.stdin?.write('go\n');
      const deadline = Date.now() + BURST_TIMEOUT_MS;
      while (lines.length < waitingFor) {
        if (Date.now() > deadline || load.process.exitCode !== null)
          throw new Error(`${contender.label}: the burst did not finish\n${load.output()}`);
        await delay(20);
      }
      clearInterval(sampler);
      const result = JSON.parse(lines[waitingFor - 1] as string) as {
        first: number[];
        final: number[];
        errors: number;
        error: string | null;
      };
      first.push(...result.first);
      final.push(...result.final);
      errors += result.errors;
      firstError ??= result.error;
    }
    const cpuAfter = sampleProcs(serverPids).cpuMs;
    const loop = mainPid !== undefined ? await loopDelay(mainPid, loopFile, 2) : null;
    load.process.stdin?.write('end\n');
    return {
      contender: label,
      streams,
      round,
      runs: first.length,
      errors,
      firstError,
      first,
      final,
      idleRssMiB: idleRss / 2 ** 20,
      peakRssMiB: peakRss / 2 ** 20,
      loopDelayP99Ms: loop?.p99_ms ?? NaN,
      loopDelayMaxMs: loop?.max_ms ?? NaN,
      cpuMsPerRun: running ? (cpuAfter - cpuBefore) / Math.max(1, first.length + errors) : NaN,
    };
  } finally {
    if (load) await stopChild(load);
    await running?.stop();
  }
}

function report(trials: Trial[]): void {
  const direct = new Map(
    trials
      .filter((row) => row.contender === 'direct')
      .map((row) => [`${row.streams}/${row.round}`, row]),
  );
  const added = (row: Trial, key: 'first' | 'final', fraction: number): number => {
    const reference = direct.get(`${row.streams}/${row.round}`);
    return reference ? percentile(row[key], fraction) - percentile(reference[key], fraction) : NaN;
  };
  const rows = trials.map((row) => ({
    ...row,
    firstP50: median(row.first),
    firstP99: percentile(row.first, 0.99),
    finalP50: median(row.final),
    finalP99: percentile(row.final, 0.99),
    addedFirstP50: added(row, 'first', 0.5),
    addedFirstP99: added(row, 'first', 0.99),
    addedFinalP50: added(row, 'final', 0.5),
    addedFinalP99: added(row, 'final', 0.99),
    kibPerRun: ((row.peakRssMiB - row.idleRssMiB) * 1024) / row.streams,
  }));
  console.log(
    `\nstream-latency: N runs started at once, each one streamed model call (first token after ${FIRST_TOKEN_DELAY_MS} ms, then ${CHUNKS} chunks ${CHUNK_DELAY_MS} ms apart); added = minus direct's same percentile, same N, same round\n`,
  );
  console.log(
    formatTable(
      [
        'round',
        'N',
        'contender',
        'runs',
        'errors',
        'first token p50 / p99 ms',
        'added p50 / p99',
        'final p50 / p99 ms',
        'added p50 / p99',
        'RSS idle → peak MiB',
        'KiB per in-flight run',
        'loop delay p99 / max ms',
        'CPU ms/run',
      ],
      rows.map((row) => [
        row.round,
        row.streams,
        row.contender,
        row.runs,
        row.errors,
        `${row.firstP50.toFixed(0)} / ${row.firstP99.toFixed(0)}`,
        row.contender === 'direct'
          ? '—'
          : `${row.addedFirstP50.toFixed(0)} / ${row.addedFirstP99.toFixed(0)}`,
        `${row.finalP50.toFixed(0)} / ${row.finalP99.toFixed(0)}`,
        row.contender === 'direct'
          ? '—'
          : `${row.addedFinalP50.toFixed(0)} / ${row.addedFinalP99.toFixed(0)}`,
        row.contender === 'direct'
          ? '—'
          : `${row.idleRssMiB.toFixed(0)} → ${row.peakRssMiB.toFixed(0)}`,
        row.contender === 'direct' ? '—' : row.kibPerRun.toFixed(0),
        row.contender === 'direct'
          ? '—'
          : `${row.loopDelayP99Ms.toFixed(1)} / ${row.loopDelayMaxMs.toFixed(0)}`,
        row.contender === 'direct' ? '—' : row.cpuMsPerRun.toFixed(2),
      ]),
    ),
  );
  for (const row of rows)
    if (row.firstError) console.log(`${row.contender} N=${row.streams}: ${row.firstError}`);
  const stripped = rows.map(({ first: _first, final: _final, ...rest }) => rest);
  console.log(
    `wrote ${writeResult('stream-latency', {
      first_token_delay_ms: FIRST_TOKEN_DELAY_MS,
      chunk_delay_ms: CHUNK_DELAY_MS,
      chunks: CHUNKS,
      rows: stripped,
    })}`,
  );
}

function streamCounts(): number[] {
  const counts = (process.env.KEEL_BENCH_STREAMS ?? '64,1000')
    .split(',')
    .map(Number)
    .filter((value) => Number.isInteger(value) && value > 0 && value <= 1024);
  return counts.length > 0 ? counts : [64];
}

function rounds(): number {
  const value = Number(process.env.KEEL_BENCH_ROUNDS ?? 1);
  return Number.isInteger(value) && value > 0 ? value : 1;
}

export async function runStreamLatencyBench(): Promise<void> {
  ensureBuilt();
  const peers = peersInstalled();
  if (peers.missing) console.log(`peers not run: ${peers.missing}`);
  const contenders = CONTENDERS.filter(
    (contender) =>
      selected(contender.label) &&
      (contender.kind === 'direct' ||
        contender.kind === 'keel' ||
        peers.names.includes(contender.kind)),
  );
  const dir = mkdtempSync(join(tmpdir(), 'keel-bench-stream-latency-'));
  // KEEL_BENCH_NODES=20,24: each server contender on each Node, named "@node20" …, the
  // order flipped every other round (as the turn bench does); direct runs once, on the
  // bench's own Node (it is the model's figures, not a server's).
  const nodes = parseBenchNodes(process.env.KEEL_BENCH_NODES);
  const model = await startFixtureModel({ chunkDelayMs: CHUNK_DELAY_MS });
  const trials: Trial[] = [];
  try {
    for (let round = 1; round <= rounds(); round++) {
      const ordered = round % 2 === 1 ? nodes : [...nodes].reverse();
      for (const streams of streamCounts()) {
        const runs = contenders.flatMap((contender) =>
          contender.kind === 'direct'
            ? [{ contender, node: RUNNING_NODE }]
            : ordered.map((node) => ({ contender, node })),
        );
        for (const { contender, node } of runs) {
          try {
            const row = await trial(dir, contender, streams, round, model, node);
            trials.push(row);
            console.log(
              `round ${round}, N=${streams}, ${row.contender}: first token p50 ${median(row.first).toFixed(0)} ms p99 ${percentile(row.first, 0.99).toFixed(0)}, final p50 ${median(row.final).toFixed(0)} p99 ${percentile(row.final, 0.99).toFixed(0)}, RSS ${row.idleRssMiB.toFixed(0)} → ${row.peakRssMiB.toFixed(0)} MiB, loop p99 ${row.loopDelayP99Ms.toFixed(1)} ms, ${row.errors} errors`,
            );
          } catch (error) {
            console.log(
              `round ${round}, N=${streams}, ${contender.label}${node.suffix} FAILED: ${String(error).slice(0, 2000)}`,
            );
          }
        }
      }
    }
    report(trials);
  } finally {
    await stopChild(model);
    rmSync(dir, { recursive: true, force: true });
  }
}
