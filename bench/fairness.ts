// `npm run bench -- fairness`: one keel process (`keel serve`, SQLite, 8 worker slots,
// default [tenant_limits]); this bench process is the load generator. Tenant B's
// one-step turn latency (POST turn → /wait returns) and schedule lateness (run
// created_at − due time) are measured twice in the same run: alone, then while tenant
// A floods — long runs (`@sleep`) in many scopes and thousands of schedules due at the
// same moment as B's. The claim (fewest running runs first, per-tenant running cap)
// and the scheduler (round-robin over tenants) are what keep B's numbers close.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RoleProcesses } from '../test/helpers/keel-roles.ts';
import { formatTable, percentile, writeResult } from './support.ts';

const B_WINDOW_MS = Number(process.env.KEEL_BENCH_FAIR_WINDOW_MS ?? 12_000);
const B_PACE_MS = 40;
const A_LONG_RUNS = Number(process.env.KEEL_BENCH_FAIR_LONG_RUNS ?? 200);
const A_LONG_MS = 5_000;
const A_SCHEDULES = Number(process.env.KEEL_BENCH_FAIR_SCHEDULES ?? 2_000);
const B_SCHEDULES = 5;
const CONCURRENCY = 8;

interface Client {
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
}

function clientOf(url: string): Client {
  return {
    async call(method, path, body) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? (JSON.parse(text) as unknown) : null };
    },
  };
}

async function must(
  client: Client,
  method: string,
  path: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const { status, body: answer } = await client.call(method, path, body);
  if (status >= 300) throw new Error(`${method} ${path}: ${status} ${JSON.stringify(answer)}`);
  return answer as Record<string, unknown>;
}

/** B's one-step turns, one every B_PACE_MS for `windowMs`: ms from POST to the run's end. */
async function turnLatencies(client: Client, label: string, windowMs: number): Promise<number[]> {
  const latencies: number[] = [];
  const end = performance.now() + windowMs;
  for (let index = 0; performance.now() < end; index += 1) {
    const started = performance.now();
    const { run_id: runId } = await must(client, 'POST', '/v1/tenants/b/turns', {
      agent: 'x',
      scope: `${label}-${index % 4}`,
      payload: { text: `hello ${index}` },
    });
    const waited = await must(client, 'GET', `/v1/tenants/b/runs/${String(runId)}/wait`);
    if ((waited.status ?? (waited.run as { status?: string })?.status) === 'queued') {
      throw new Error('wait returned before the run ended');
    }
    latencies.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, B_PACE_MS));
  }
  return latencies;
}

/** Puts `count` one-shot schedules of `tenant` due at `dueAt`, 16 requests at a time. */
async function putSchedules(
  client: Client,
  tenant: string,
  prefix: string,
  count: number,
  dueAt: number,
  text: string,
): Promise<void> {
  const at = new Date(dueAt).toISOString();
  for (let start = 0; start < count; start += 16) {
    await Promise.all(
      Array.from({ length: Math.min(16, count - start) }, (_, offset) =>
        must(client, 'PUT', `/v1/tenants/${tenant}/schedules/${prefix}-${start + offset}`, {
          agent: 'x',
          scope: `${prefix}-${start + offset}`,
          payload: { text },
          at,
        }),
      ),
    );
  }
}

/** Lateness (ms) of B's schedule runs named `prefix-*`, once all have been created. */
async function scheduleLateness(client: Client, prefix: string, dueAt: number): Promise<number[]> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const page = await must(client, 'GET', '/v1/tenants/b/runs?source=schedule&limit=200');
    const runs = (page.runs as { scope: string; created_at: string }[]).filter((run) =>
      run.scope.startsWith(`${prefix}-`),
    );
    if (runs.length >= B_SCHEDULES) return runs.map((run) => Date.parse(run.created_at) - dueAt);
    if (Date.now() > deadline) throw new Error(`only ${runs.length} of B's schedules fired`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function runFairnessBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-bench-fair-'));
  const config = join(dir, 'keel.toml');
  // The load generator itself must not be rate limited; everything else is the default.
  writeFileSync(
    config,
    `[workers]\nconcurrency = ${CONCURRENCY}\n\n[tenant_limits]\nrequests_per_s = 1000000\nrequest_burst = 1000000\nschedules = ${A_SCHEDULES + B_SCHEDULES}\n`,
  );
  const processes = new RoleProcesses();
  try {
    const keel = await processes.start('all', `sqlite:${join(dir, 'keel.db')}`, {
      config,
      env: { KEEL_LOG_LEVEL: 'warn' },
    });
    const client = clientOf(keel.url);
    for (const tenant of ['a', 'b']) {
      await must(client, 'POST', '/v1/tenants', { name: tenant });
      await must(client, 'PUT', `/v1/tenants/${tenant}/agents/x`, { model: 'fixture/echo' });
    }
    await turnLatencies(client, 'warmup', 2_000);

    // Alone: B's turns over a window that contains the due time of B's schedules.
    const aloneDue = Date.now() + B_WINDOW_MS / 2;
    await putSchedules(client, 'b', 'alone', B_SCHEDULES, aloneDue, 'scheduled');
    const alone = await turnLatencies(client, 'alone', B_WINDOW_MS);
    const aloneLate = await scheduleLateness(client, 'alone', aloneDue);

    // Flood: A's schedules and B's due at the same moment; A's long runs fill the queue.
    const floodDue = Date.now() + 20_000;
    await putSchedules(client, 'a', 'flood', A_SCHEDULES, floodDue, `@sleep ${A_LONG_MS}`);
    await putSchedules(client, 'b', 'flooded', B_SCHEDULES, floodDue, 'scheduled');
    for (let start = 0; start < A_LONG_RUNS; start += 20) {
      await Promise.all(
        Array.from({ length: Math.min(20, A_LONG_RUNS - start) }, (_, offset) =>
          must(client, 'POST', '/v1/tenants/a/turns', {
            agent: 'x',
            scope: `long-${start + offset}`,
            payload: { text: `@sleep ${A_LONG_MS}` },
          }),
        ),
      );
    }
    // B's window starts a little before A's 2000 schedules fall due with B's own.
    const aRunning = await must(client, 'GET', '/v1/tenants/a/runs?status=running&limit=200');
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, floodDue - 2_000 - Date.now())));
    const flooded = await turnLatencies(client, 'flooded', B_WINDOW_MS);
    const floodedLate = await scheduleLateness(client, 'flooded', floodDue);
    const aQueued = await must(client, 'GET', '/v1/tenants/a/runs?status=queued&limit=200');

    const rows = [
      ['alone', percentile(alone, 0.5), percentile(alone, 0.99), Math.max(...aloneLate)],
      ['A flooding', percentile(flooded, 0.5), percentile(flooded, 0.99), Math.max(...floodedLate)],
    ];
    const ratio = percentile(flooded, 0.99) / percentile(alone, 0.99);
    console.log(
      `\nfairness: ${CONCURRENCY} worker slots; A = ${A_LONG_RUNS} runs of ${A_LONG_MS} ms + ${A_SCHEDULES} schedules due with B's ${B_SCHEDULES}; B = one-step turns, one at a time every ${B_PACE_MS} ms for ${B_WINDOW_MS} ms (${alone.length} alone, ${flooded.length} flooded)`,
    );
    console.log(
      formatTable(['tenant B', 'turn p50 ms', 'turn p99 ms', 'schedule lateness max ms'], rows),
    );
    console.log(
      `B p99 flooded / alone = ${ratio.toFixed(2)} (must be ≤ 2); A: ${(aRunning.runs as unknown[]).length} running before the window, ≥ ${(aQueued.runs as unknown[]).length} queued after it`,
    );
    const path = writeResult('fairness', {
      slots: CONCURRENCY,
      a_long_runs: A_LONG_RUNS,
      a_schedules: A_SCHEDULES,
      b_window_ms: B_WINDOW_MS,
      alone: { p50: percentile(alone, 0.5), p99: percentile(alone, 0.99), lateness: aloneLate },
      flooded: {
        p50: percentile(flooded, 0.5),
        p99: percentile(flooded, 0.99),
        lateness: floodedLate,
      },
      ratio,
    });
    console.log(`results: ${path}`);
    if (ratio > 2) process.exitCode = 1;
  } finally {
    processes.killAll();
    rmSync(dir, { recursive: true, force: true });
  }
}
