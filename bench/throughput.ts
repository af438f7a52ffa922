// `npm run bench -- throughput`: turns/s end to end over HTTP on loopback — submit
// (POST /turns) + wait (GET /runs/:id/wait), 200 scopes in parallel, one tool round,
// the fixture model in process with 0 ms and 50 ms latency per model call — for
// durability "full" and "process". Beside it, in the same run: a bare node:http hello
// world (the HTTP ceiling, two requests per turn) and the raw durable commit (the
// commit ceiling: 1000 / (commits per turn × raw commit ms) turns/s, commits being
// serial in one SQLite writer). Target: "full" at 0 ms ≥ half of min(both ceilings).

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Agent, fetch } from 'undici';
import { loadConfig } from '../src/config.ts';
import { startKeel } from '../src/main.ts';
import { countCommits, openRawCommitter } from './durable-commit.ts';
import { formatTable, median, nowMs, percentile, writeResult } from './support.ts';
import { agentSpec } from '../test/helpers/agent-spec.ts';

const SCOPES = 200;
const CONCURRENCY = 64;

async function helloWorldRate(dispatcher: Agent): Promise<number> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end('hello');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`;
  const requests = SCOPES * 10;
  const started = nowMs();
  await Promise.all(
    Array.from({ length: SCOPES }, async () => {
      for (let i = 0; i < requests / SCOPES; i++) {
        const response = await fetch(url, { dispatcher });
        await response.text();
      }
    }),
  );
  const rate = requests / ((nowMs() - started) / 1000);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return rate;
}

interface Trial {
  durability: 'full' | 'process';
  latencyMs: number;
  turnsPerSecond: number;
  p50: number;
  p99: number;
  commitsPerTurn: number;
}

async function keelTrial(
  dir: string,
  durability: 'full' | 'process',
  latencyMs: number,
  dispatcher: Agent,
): Promise<Trial> {
  const loaded = loadConfig(
    { data_dir: join(dir, `${durability}-${latencyMs}`), listen: '127.0.0.1:0' },
    {},
    dir,
  );
  const keel = await startKeel(
    {
      ...loaded,
      store: { ...loaded.store, durability },
      workers: { ...loaded.workers, concurrency: CONCURRENCY },
      // SCOPES waits are held at once, one tenant: above the default per-tenant cap.
      http: { ...loaded.http, max_streams_per_tenant: 1000 },
    },
    { logger: pino({ level: 'silent' }) },
  );
  try {
    await keel.store.createTenant('bench', {});
    await keel.store.putAgent('bench', 'agent', agentSpec({ model: 'fixture/bench' }));
    const commits = countCommits(keel.store);
    const text = `what time is it?\n@call clock_now {}${latencyMs > 0 ? `\n@sleep ${latencyMs}` : ''}`;
    const latencies: number[] = [];
    const started = nowMs();
    await Promise.all(
      Array.from({ length: SCOPES }, async (_, index) => {
        const begun = nowMs();
        const submitted = await fetch(`${keel.url}/v1/tenants/bench/turns`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ agent: 'agent', scope: `scope-${index}`, payload: { text } }),
          dispatcher,
        });
        const { run_id: runId } = (await submitted.json()) as { run_id: string };
        const waited = await fetch(
          `${keel.url}/v1/tenants/bench/runs/${runId}/wait?timeout_ms=60000`,
          {
            dispatcher,
          },
        );
        const { run } = (await waited.json()) as { run: { status: string } };
        if (run.status !== 'succeeded') throw new Error(`run ${runId} ended ${run.status}`);
        latencies.push(nowMs() - begun);
      }),
    );
    const seconds = (nowMs() - started) / 1000;
    return {
      durability,
      latencyMs,
      turnsPerSecond: SCOPES / seconds,
      p50: median(latencies),
      p99: percentile(latencies, 0.99),
      commitsPerTurn: commits.count() / SCOPES,
    };
  } finally {
    await keel.stop();
  }
}

export async function runThroughputBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-bench-throughput-'));
  const dispatcher = new Agent({ connections: SCOPES, keepAliveTimeout: 10_000 });
  const trials: Trial[] = [];
  const helloRates: number[] = [];
  const rawCommitMs: Record<'full' | 'process', number[]> = { full: [], process: [] };
  try {
    // Interleaved: the hello-world ceiling and raw commits are measured between trials.
    for (const durability of ['full', 'process'] as const) {
      for (const latencyMs of [0, 50]) {
        helloRates.push(await helloWorldRate(dispatcher));
        const raw = openRawCommitter(dir, durability);
        for (let i = 0; i < 200; i++) rawCommitMs[durability].push(raw.commit());
        raw.close();
        trials.push(await keelTrial(dir, durability, latencyMs, dispatcher));
      }
    }
  } finally {
    await dispatcher.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const hello = median(helloRates);
  const httpCeiling = hello / 2;
  const rows = trials.map((trial) => {
    const commitMs = median(rawCommitMs[trial.durability]);
    const commitCeiling = 1000 / (trial.commitsPerTurn * commitMs);
    const ceiling = Math.min(httpCeiling, commitCeiling);
    return [
      trial.durability,
      trial.latencyMs,
      trial.turnsPerSecond,
      trial.p50,
      trial.p99,
      trial.commitsPerTurn,
      commitMs,
      commitCeiling,
      httpCeiling,
      trial.turnsPerSecond / ceiling,
    ];
  });
  console.log(
    `\nthroughput: ${SCOPES} scopes in parallel, submit + wait over HTTP on loopback, 1 tool round, worker concurrency ${CONCURRENCY}\n`,
  );
  console.log(
    formatTable(
      [
        'durability',
        'model ms',
        'turns/s',
        'p50 ms',
        'p99 ms',
        'commits/turn',
        'raw commit ms',
        'commit ceiling/s',
        'http ceiling/s',
        'of ceiling',
      ],
      rows,
    ),
  );
  console.log(`\nbare node:http hello world: ${hello.toFixed(0)} req/s (2 requests per turn)`);
  console.log(
    'target: durability "full", 0 ms model: turns/s ≥ 0.5 × min(commit ceiling, http ceiling)',
  );
  console.log(
    `wrote ${writeResult('throughput', { scopes: SCOPES, concurrency: CONCURRENCY, hello_rps: hello, rows, trials })}`,
  );
}
