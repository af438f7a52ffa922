// `npm run bench -- delivery`: from a run finalized to the fake Bot API receiving its
// message, through the real path — a `keel serve` child, the keel-telegram adapter child
// waiting on keel's claim long poll (`wait_ms`, woken by the store's notification), and
// a fake Bot API on loopback. Turns go one at a time so each latency is the idle path.
// Latency = the fake's receive time − the run's `finished_at` (same machine clock, ms).
// Targets (issue 14): p50 ≤ 50 ms, p99 ≤ 250 ms over 500 deliveries.

import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeBotApi } from '../test/helpers/fake-bot-api.ts';
import { formatTable, median, percentile, writeResult } from './support.ts';

const DELIVERIES = Number(process.env.KEEL_BENCH_DELIVERIES ?? 500);
const WARMUP = 20;
const ROOT = new URL('..', import.meta.url).pathname;

function spawnNode(args: string[], env: Record<string, string>): ChildProcess {
  const base: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('KEEL_') && !key.startsWith('TELEGRAM_')) base[key] = value;
  }
  return spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: ROOT,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function readyLine(child: ChildProcess, pattern: RegExp): Promise<RegExpExecArray> {
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      out += chunk.toString();
      const match = pattern.exec(out);
      if (match) resolve(match);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', () => reject(new Error(`exited early: ${out}`)));
  });
}

async function call(url: string, method: string, path: string, body?: unknown, token?: string) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...(method !== 'GET' && { 'content-type': 'application/json' }),
      ...(token && { authorization: `Bearer ${token}` }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok)
    throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as Record<string, unknown>;
}

export async function runDeliveryBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-bench-delivery-'));
  const fake = await startFakeBotApi();
  const children: ChildProcess[] = [];
  try {
    const keel = spawnNode(
      ['src/cli/main.ts', 'serve', '--listen', '127.0.0.1:0', '--data-dir', dir],
      { KEEL_LOG_LEVEL: 'warn' },
    );
    children.push(keel);
    const url = (await readyLine(keel, /keel listening on (http:\/\/\S+)/))[1] ?? '';
    await call(url, 'POST', '/v1/tenants', { name: 'bench' });
    await call(url, 'PUT', '/v1/tenants/bench/agents/a', { model: 'fixture/echo' });
    const token = String(
      (await call(url, 'POST', '/v1/tenants/bench/tokens', { name: 'tg' })).token,
    );
    const adapter = spawnNode(['adapters/telegram/src/main.ts', '--agent', 'a'], {
      KEEL_URL: url,
      KEEL_TOKEN: token,
      KEEL_TENANT: 'bench',
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_API_ROOT: fake.url,
      // The bench posts its turns to keel directly; no Telegram user talks to the bot.
      TELEGRAM_ALLOWED_USERS: '1',
    });
    children.push(adapter);
    await readyLine(adapter, /serving agent a/);

    const latencies: number[] = [];
    for (let i = 0; i < WARMUP + DELIVERIES; i += 1) {
      const before = fake.sent.length;
      // Turns straight to keel (not through getUpdates): this measures the outbound path.
      const turn = await call(
        url,
        'POST',
        '/v1/tenants/bench/turns',
        {
          agent: 'a',
          scope: 'tg:1',
          payload: { text: `m${i}` },
          delivery: { destination: 'tg:1' },
        },
        token,
      );
      const waited = await call(
        url,
        'GET',
        `/v1/tenants/bench/runs/${String(turn.run_id)}/wait?timeout_ms=30000`,
        undefined,
        token,
      );
      const finishedAt = Date.parse(String((waited.run as { finished_at: string }).finished_at));
      while (fake.sent.length === before) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      const message = fake.sent[before];
      if (message?.text !== `echo: m${i}`) throw new Error(`unexpected message ${message?.text}`);
      if (i >= WARMUP) latencies.push(message.received_at - finishedAt);
    }
    const result = {
      deliveries: DELIVERIES,
      p50_ms: median(latencies),
      p99_ms: percentile(latencies, 0.99),
      max_ms: Math.max(...latencies),
      send_attempts: fake.sendAttempts,
    };
    console.log('delivery: run finalized → fake Bot API received the message');
    console.log(
      formatTable(
        ['deliveries', 'p50 ms', 'p99 ms', 'max ms'],
        [[DELIVERIES, result.p50_ms, result.p99_ms, result.max_ms]],
      ),
    );
    console.log('targets: p50 ≤ 50 ms, p99 ≤ 250 ms');
    console.log(`wrote ${writeResult('delivery', result)}`);
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
