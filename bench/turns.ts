// `npm run bench -- turns`: CPU per turn measured from outside. Every contender runs as
// its own process; a separate load-generator process (turns/load.ts) sends TURNS turns
// over SCOPES scopes, INFLIGHT at once, each one tool round of the fixture model then an
// answer; the server's CPU time, bytes written and memory come from /proc before and
// after the load (turns/proc-stats.ts), plus the fixture-model server's CPU when the
// model is reached over HTTP. Interleaved in the same run: the floor (fastify answering
// the two requests of a turn plus keel's number of raw SQLite commits) and the peers
// (turns/peers.ts, installed in bench/peers/). `npm run bench -- turns-pg`: keel on
// PostgreSQL (an api and a worker process) with PostgreSQL's own backends sampled too.
// KEEL_BENCH_ROUNDS (default 1) repeats the whole interleaved sequence. KEEL_BENCH_NODES=20,24
// runs every server contender on each Node in turn, side by side (turns/node-runtimes.ts).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Child } from './turns/children.ts';
import { startChild, stopChild } from './turns/children.ts';
import {
  LOAD_ARGS,
  LOAD_SCRIPT,
  ROOT,
  cleanEnv,
  ensureBuilt,
  startFixtureModel,
  startFloor,
  startKeelContender,
  type Running,
} from './turns/contenders.ts';
import { countKeelCommits, setUpKeel, type BenchTools } from './turns/keel-setup.ts';
import { parseBenchNodes, type NodeRuntime } from './turns/node-runtimes.ts';
import { printNodeComparison, type RoundRow } from './turns/node-comparison.ts';
import { peersInstalled, startPeer, type PeerName } from './turns/peers.ts';
import { postgresBackends, postgresSchemaUrl, dropPostgresSchema } from './turns/postgres.ts';
import { sampleProcs, processTree, type ProcSample } from './turns/proc-stats.ts';
import type { LoadSpec } from './turns/protocols.ts';
import { formatTable, median, percentile, writeResult } from './support.ts';

// KEEL_BENCH_TURNS overrides it: a longer measured load averages out a noisy machine
// (the load is 400 turns; docs/benchmarks.md says which runs used more).
const TURNS = Number(process.env.KEEL_BENCH_TURNS ?? 400);
const SCOPES = 200;
// KEEL_BENCH_INFLIGHT overrides it (e.g. for turns-pg on a loaded machine, where 64
// concurrent submits can outwait the PostgreSQL pool's connect timeout).
const INFLIGHT = Number(process.env.KEEL_BENCH_INFLIGHT ?? 64);
const TEXT = 'what time is it?\n@call clock_now {}';
/**
 * Turns before the measured load (the load process runs them on scopes of their own; see
 * load.ts). V8 keeps compiling keel's hot paths for several hundred turns: after 64,
 * TurboFan's background threads still took 19 % of the measured CPU (perf), and keel's
 * CPU per turn fell from ~4.4 ms (64) to ~3.0 (1024) and ~2.5 (2048) in process mode.
 */
const WARMUP_TURNS = 1024;
const LOAD_READY_TIMEOUT_MS = 20 * 60_000;

interface Measured {
  name: string;
  durable: string;
  turns: number;
  turnsPerSecond: number;
  p50: number;
  p99: number;
  serverCpuMsPerTurn: number;
  modelCpuMsPerTurn: number;
  postgresCpuMsPerTurn: number;
  writeKiBPerTurn: number;
  rssMiB: number;
}

async function measure(
  name: string,
  durable: string,
  running: Running,
  model: Child | null,
  extraPids: (serverPids: number[]) => Promise<number[]> = async () => [],
): Promise<Measured> {
  const spec: LoadSpec = {
    kind: running.kind,
    url: running.url,
    turns: TURNS,
    scopes: SCOPES,
    inflight: INFLIGHT,
    warmup: WARMUP_TURNS,
    text: TEXT,
  };
  const load = await startChild(
    process.execPath,
    [...LOAD_ARGS, LOAD_SCRIPT, JSON.stringify(spec)],
    {
      env: cleanEnv(),
      cwd: ROOT,
      ready: /^(ready)$/m,
      stdin: true,
      // It is ready after its warm-up turns: on a loaded machine LangGraph.js's 1024 took
      // over two minutes.
      readyTimeoutMs: LOAD_READY_TIMEOUT_MS,
    },
  );
  const serverPids = running.pids().flatMap((pid) => processTree(pid));
  const otherPids = await extraPids(serverPids);
  const modelPids = model ? [model.pid] : [];
  const before = [sampleProcs(serverPids), sampleProcs(modelPids), sampleProcs(otherPids)];
  let result = '';
  load.process.stdout?.on('data', (chunk: Buffer) => (result += chunk.toString('utf8')));
  load.process.stdin?.write('go\n');
  await load.exited;
  const after = [sampleProcs(serverPids), sampleProcs(modelPids), sampleProcs(otherPids)];
  const line = result.split('\n').find((text) => text.startsWith('{'));
  if (load.process.exitCode !== 0 || !line)
    throw new Error(`${name}: the load generator failed\n${load.output()}`);
  const { latencies, seconds } = JSON.parse(line) as { latencies: number[]; seconds: number };
  const delta = (index: number, key: keyof ProcSample): number =>
    ((after[index] as ProcSample)[key] - (before[index] as ProcSample)[key]) / TURNS;
  return {
    name,
    durable,
    turns: TURNS,
    turnsPerSecond: TURNS / seconds,
    p50: median(latencies),
    p99: percentile(latencies, 0.99),
    serverCpuMsPerTurn: delta(0, 'cpuMs'),
    modelCpuMsPerTurn: model ? delta(1, 'cpuMs') : 0,
    postgresCpuMsPerTurn: otherPids.length > 0 ? delta(2, 'cpuMs') : 0,
    writeKiBPerTurn: (delta(0, 'writeBytes') + delta(2, 'writeBytes')) / 1024,
    rssMiB: (after[0] as ProcSample).hwmBytes / 1024 / 1024,
  };
}

const DURABLE = {
  full: 'every step, fsync before ack',
  process: 'every step, OS buffer',
  floor: 'raw rows only',
};

interface KeelTrialOptions {
  /** The `keel fixture-model` server; null: the fixture model in process. */
  model: Child | null;
  node: NodeRuntime;
  /** Another checkout of keel (KEEL_BENCH_BASELINE); absent: this one. */
  checkout?: string;
  modelStream?: boolean | 'when-watched';
  tools?: BenchTools;
}

async function keelTrial(
  dir: string,
  name: string,
  durability: 'full' | 'process',
  { model, node, checkout, modelStream, tools }: KeelTrialOptions,
): Promise<Measured> {
  const running = await startKeelContender({
    dir: mkdtempSync(join(dir, 'keel-')),
    durability,
    node,
    ...(checkout && { checkout }),
    ...(modelStream !== undefined && { modelStream }),
    concurrency: INFLIGHT,
    ...(model && { modelUrl: model.ready }),
  });
  try {
    await setUpKeel(running.url, model ? 'local/fixture' : 'fixture/bench', tools);
    return await measure(name, DURABLE[durability], running, model);
  } finally {
    await running.stop();
  }
}

async function floorTrial(
  dir: string,
  durability: 'full' | 'process',
  commits: number,
  node: NodeRuntime,
): Promise<Measured> {
  const running = await startFloor(mkdtempSync(join(dir, 'floor-')), durability, commits, node);
  try {
    return await measure(`floor ${durability}`, `${commits} raw commits`, running, null);
  } finally {
    await running.stop();
  }
}

async function peerTrial(
  dir: string,
  peer: PeerName,
  model: Child,
  node: NodeRuntime,
): Promise<Measured> {
  const running = await startPeer(peer, mkdtempSync(join(dir, `${peer}-`)), model.ready, { node });
  try {
    return await measure(peer, running.durable, running, model);
  } finally {
    await running.stop();
  }
}

function report(title: string, rows: Measured[], extra: Record<string, unknown>): void {
  console.log(`\n${title}\n`);
  console.log(
    formatTable(
      [
        'contender',
        'durable per turn',
        'turns/s',
        'p50 ms',
        'p99 ms',
        'server CPU ms/turn',
        'model CPU ms/turn',
        'PostgreSQL CPU ms/turn',
        'written KiB/turn',
        'peak RSS MiB',
      ],
      rows.map((row) => [
        row.name,
        row.durable,
        row.turnsPerSecond,
        row.p50,
        row.p99,
        row.serverCpuMsPerTurn,
        row.modelCpuMsPerTurn,
        row.postgresCpuMsPerTurn,
        row.writeKiBPerTurn,
        row.rssMiB,
      ]),
    ),
  );
  console.log(`wrote ${writeResult(extra.name as string, { ...extra, rows })}`);
}

/** KEEL_BENCH_ONLY=keel-full,floor-full,langgraph…: only those trials (all when unset). */
function selected(label: string): boolean {
  const only = process.env.KEEL_BENCH_ONLY;
  return !only || only.split(',').includes(label);
}

function rounds(): number {
  const value = Number(process.env.KEEL_BENCH_ROUNDS ?? 1);
  return Number.isInteger(value) && value > 0 ? value : 1;
}

export async function runTurnsBench(): Promise<void> {
  ensureBuilt();
  if (process.env.KEEL_BENCH_BASELINE) ensureBuilt(`${process.env.KEEL_BENCH_BASELINE}/`);
  const nodes = parseBenchNodes(process.env.KEEL_BENCH_NODES);
  const dir = mkdtempSync(join(tmpdir(), 'keel-bench-turns-'));
  const model = await startFixtureModel();
  const rows: (Measured & RoundRow)[] = [];
  try {
    const commits = await countKeelCommits(TEXT);
    const peers = peersInstalled();
    const failures: string[] = [];
    let round = 0;
    // Each trial once per Node, one after the other; every other round in the opposite
    // order, so neither Node always runs first on a machine whose load drifts.
    const run = async (
      label: string,
      trial: (node: NodeRuntime) => Promise<Measured>,
    ): Promise<void> => {
      if (!selected(label)) return;
      for (const node of round % 2 === 0 ? nodes : [...nodes].reverse()) {
        try {
          const measured = await trial(node);
          const row = {
            ...measured,
            name: measured.name + node.suffix,
            contender: measured.name,
            node: node.version,
            round: round + 1,
          };
          rows.push(row);
          console.log(
            `${row.name}: ${row.turnsPerSecond.toFixed(0)} turns/s, server ${row.serverCpuMsPerTurn.toFixed(2)} ms CPU/turn, model ${row.modelCpuMsPerTurn.toFixed(2)}, ${row.writeKiBPerTurn.toFixed(1)} KiB written/turn`,
          );
        } catch (error) {
          failures.push(`${label}${node.suffix}: ${String(error).slice(0, 2000)}`);
          console.log(`${label}${node.suffix} FAILED: ${String(error).slice(0, 2000)}`);
        }
      }
    };
    for (; round < rounds(); round++) {
      for (const durability of ['full', 'process'] as const) {
        await run(`floor-${durability}`, (node) => floorTrial(dir, durability, commits, node));
        await run(`keel-${durability}`, (node) =>
          keelTrial(dir, `keel ${durability}, model in process`, durability, {
            model: null,
            node,
          }),
        );
        await run(`keel-${durability}-http`, (node) =>
          keelTrial(dir, `keel ${durability}, model over HTTP`, durability, { model, node }),
        );
      }
      // The default provider streams only watched runs (stream = "when-watched"): the
      // load only waits, so nothing is streamed. This one streams every call, as the
      // default did until 2026-12-03 (docs/agent-loop.md, Providers).
      await run('keel-full-http-stream', (node) =>
        keelTrial(dir, 'keel full, model over HTTP, stream = true', 'full', {
          model,
          node,
          modelStream: true,
        }),
      );
      // Every keel contender's agent offers the peers' one tool; this one offers keel's
      // whole built-in set, as the agent's default does (and this bench did until the
      // sixth session of issue 21): 16 tool definitions in each model request.
      await run('keel-full-http-all-tools', (node) =>
        keelTrial(dir, 'keel full, model over HTTP, all 16 built-in tools offered', 'full', {
          model,
          node,
          tools: 'all',
        }),
      );
      // KEEL_BENCH_BASELINE=<another checkout of keel>: the old code, in the same run.
      const baseline = process.env.KEEL_BENCH_BASELINE;
      if (baseline) {
        for (const durability of ['full', 'process'] as const) {
          await run(`baseline-${durability}`, (node) =>
            keelTrial(dir, `baseline ${durability}, model in process`, durability, {
              model: null,
              node,
              checkout: baseline,
            }),
          );
          await run(`baseline-${durability}-http`, (node) =>
            keelTrial(dir, `baseline ${durability}, model over HTTP`, durability, {
              model,
              node,
              checkout: baseline,
            }),
          );
        }
      }
      for (const peer of peers.names) await run(peer, (node) => peerTrial(dir, peer, model, node));
    }
    if (nodes.length > 1) printNodeComparison(rows, nodes);
    if (peers.missing) console.log(`\npeers not run: ${peers.missing}`);
    for (const failure of failures) console.log(`\nFAILED ${failure}`);
    report(
      `turns: ${TURNS} turns over ${SCOPES} scopes, ${INFLIGHT} in flight, one tool round; a separate load process; CPU from /proc (${commits} commits per keel turn)`,
      rows,
      {
        name: 'turns',
        turns: TURNS,
        scopes: SCOPES,
        inflight: INFLIGHT,
        commits_per_turn: commits,
      },
    );
  } finally {
    await stopChild(model);
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runTurnsPostgresBench(): Promise<void> {
  ensureBuilt();
  // KEEL_BENCH_BASELINE=<another checkout of keel>: the old code, in the same run.
  const baseline = process.env.KEEL_BENCH_BASELINE;
  if (baseline) ensureBuilt(`${baseline}/`);
  const dir = mkdtempSync(join(tmpdir(), 'keel-bench-turns-pg-'));
  const model = await startFixtureModel();
  const rows: Measured[] = [];
  const schemas: string[] = [];
  // This checkout (undefined), then the baseline's when there is one.
  const checkouts = baseline ? [undefined, baseline] : [undefined];
  try {
    for (let round = 0; round < rounds(); round++) {
      for (const [remote, checkout] of [false, true].flatMap((remote) =>
        checkouts.map((checkout) => [remote, checkout] as const),
      )) {
        const { url, schema } = postgresSchemaUrl();
        schemas.push(schema);
        const running = await startKeelContender({
          dir: mkdtempSync(join(dir, 'keel-')),
          durability: 'full',
          concurrency: INFLIGHT,
          storeUrl: url,
          ...(remote && { modelUrl: model.ready }),
          ...(checkout && { checkout }),
        });
        try {
          await setUpKeel(running.url, remote ? 'local/fixture' : 'fixture/bench');
          const name = `${checkout ? 'baseline' : 'keel'} on PostgreSQL (api + 1 worker), model ${remote ? 'over HTTP' : 'in process'}`;
          rows.push(
            await measure(
              name,
              'every step, PostgreSQL commit',
              running,
              remote ? model : null,
              (pids) => postgresBackends(pids),
            ),
          );
        } finally {
          await running.stop();
        }
      }
    }
    report(
      `turns-pg: ${TURNS} turns over ${SCOPES} scopes, ${INFLIGHT} in flight; keel's api + worker processes and all PostgreSQL backends from /proc`,
      rows,
      { name: 'turns-pg', turns: TURNS, scopes: SCOPES, inflight: INFLIGHT },
    );
  } finally {
    await stopChild(model);
    for (const schema of schemas) await dropPostgresSchema(schema).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}
