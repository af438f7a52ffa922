// The console e2e test's server: a real `keel serve` child (admin token, SQLite data
// dir, `--listen 127.0.0.1:0`), plus seeding that would take minutes through the API:
// 10,000 finished runs and one run with 1,000 trace events, written straight into the
// migrated SQLite file before keel starts.

import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { KEEL_CLI } from './keel-cli.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

export interface ServedKeel {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

export async function serveKeel(
  dataDir: string,
  adminToken: string,
  config: string,
): Promise<ServedKeel> {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('KEEL_')) env[key] = value;
  }
  const args = [...KEEL_CLI, 'serve', '--listen', '127.0.0.1:0'];
  args.push('--data-dir', dataDir, '--config', config);
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...env, KEEL_ADMIN_TOKEN: adminToken, KEEL_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line: ${output}`)), 60_000);
    child.stdout.on('data', () => {
      const match = /keel listening on (http:\/\/\S+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void exited.then(() => reject(new Error(`keel serve exited early: ${output}`)));
  });
  return {
    url,
    child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

function uuidv7Like(n: number, base: number): string {
  // Time-ordered like keel's UUIDv7 ids, so newest-first paging sees them in order.
  const time = (base + n).toString(16).padStart(12, '0');
  const tail = n.toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7000-8000-${tail}`;
}

/** A run's 1,000 events: queued, claimed, a note, 249 model/tool rounds, succeeded. */
function thousandEvents(): { type: string; data: unknown }[] {
  const usage = { input_tokens: 10, output_tokens: 5 };
  const events: { type: string; data: unknown }[] = [
    { type: 'run.queued', data: { source: 'api', request_id: null } },
    { type: 'run.claimed', data: { attempt: 1, worker: 'seed' } },
    { type: 'run.note', data: { text: 'seeded for the render budget' } },
  ];
  for (let step = 1; step <= 249; step += 1) {
    const call_id = `call_${step}_1`;
    events.push({ type: 'model.request', data: { step, model: 'fixture/echo' } });
    events.push({
      type: 'model.response',
      data: { step, usage, latency_ms: 3, finish_reason: 'tool_calls' },
    });
    events.push({
      type: 'tool.call',
      data: { step, call_id, name: 'clock_now', attempt: 1, effect: 'read_only' },
    });
    events.push({
      type: 'tool.result',
      data: { call_id, name: 'clock_now', ok: true, result: { step }, duration_ms: 1 },
    });
  }
  events.push({
    type: 'run.succeeded',
    data: { output: { reply: 'done after 249 tool calls' }, usage, steps: 249 },
  });
  return events;
}

/**
 * Tenant `tenant` with `runs` finished runs; returns the id of the one that carries
 * 1,000 trace events.
 */
export async function seedBulkTenant(dataDir: string, tenant: string, runs: number) {
  const path = join(dataDir, 'keel.db');
  const store = await openSqliteStore({ path, durability: 'full' });
  await store.createTenant(tenant, {});
  await store.close();

  const db = new Database(path);
  const insertRun = db.prepare(
    `INSERT INTO runs (run_id, tenant, agent, scope, source, input, fingerprint, status,
       output, attempt, steps, usage, created_at, started_at, finished_at)
     VALUES (?, ?, ?, ?, 'api', '{}', 'seed', ?, ?, ?, 1, '{"input_tokens":1,"output_tokens":1,"model_calls":1,"tool_calls":0}', ?, ?, ?)`,
  );
  const insertEvent = db.prepare(
    'INSERT INTO run_events (run_id, seq, ts, type, data) VALUES (?, ?, ?, ?, ?)',
  );
  const base = Date.now() - runs * 1000;
  let bigRun = '';
  db.transaction(() => {
    for (let n = 0; n < runs; n += 1) {
      const id = uuidv7Like(n, base);
      const status = n % 10 === 0 ? 'failed' : 'succeeded';
      const at = base + n * 1000;
      insertRun.run(
        id,
        tenant,
        `agent-${n % 3}`,
        `scope-${n % 50}`,
        status,
        '{"reply":"ok"}',
        1,
        at,
        at,
        at + 5,
      );
      if (n === runs - 1) bigRun = id;
    }
    thousandEvents().forEach((event, index) =>
      insertEvent.run(bigRun, index + 1, base, event.type, JSON.stringify(event.data)),
    );
  })();
  db.close();
  return { bigRun };
}
