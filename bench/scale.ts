// `npm run bench -- scale`: PostgreSQL scale-out. (1) turns/s with 1, 2 and 4 worker
// processes (`keel serve --role worker`) behind one API process, every turn one model
// call of 50 ms (`@sleep 50`), with the max number of runs of one scope executing at
// once (from the trace: must be 1); (2) claim latency p50/p99 with 100k queued runs
// over 10k scopes, and the claim statement's EXPLAIN ANALYZE saved to bench/results.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import pg from 'pg';
import { RoleProcesses } from '../test/helpers/keel-roles.ts';
import {
  POSTGRES_URL,
  dropSchemas,
  freshSchemaName,
  urlWithSchema,
} from '../test/helpers/postgres.ts';
import { CLAIM_SQL, openPostgresStore } from '../src/store/postgres/index.ts';

const TURNS = Number(process.env.KEEL_BENCH_SCALE_TURNS ?? 400);
const SCOPES = 200;
const RESULTS = new URL('./results/', import.meta.url).pathname;

async function post(
  url: string,
  path: string,
  body: unknown,
): Promise<{ status: number; body: { run_id?: string } }> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as { run_id?: string } };
}

async function turnsPerSecond(workers: number): Promise<{ rate: number; maxPerScope: number }> {
  const schema = freshSchemaName('keel_bench_scale');
  const storeUrl = urlWithSchema(schema);
  const processes = new RoleProcesses();
  const config = join(tmpdir(), `keel-bench-scale-${process.pid}.toml`);
  // One tenant on up to 4 workers: neither its running cap nor the per-tenant cap of
  // open waits (every turn's wait is held at once) must be the bottleneck measured, nor
  // the cap of sockets from one address (every wait comes from loopback).
  writeFileSync(
    config,
    '[workers]\nconcurrency = 32\n\n[tenant_limits]\nrunning_runs = 128\nrequests_per_s = 100000\nrequest_burst = 100000\n\n[http]\nmax_streams_per_tenant = 1000\nmax_connections_per_address = 1024\n',
  );
  try {
    const api = await processes.start('api', storeUrl, { config, env: { KEEL_LOG_LEVEL: 'warn' } });
    await Promise.all(
      Array.from({ length: workers }, () =>
        processes.start('worker', storeUrl, { config, env: { KEEL_LOG_LEVEL: 'warn' } }),
      ),
    );
    await post(api.url, '/v1/tenants', { name: 'bench' });
    await fetch(`${api.url}/v1/tenants/bench/agents/a`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fixture/echo' }),
    });
    const started = performance.now();
    const ids: string[] = [];
    for (let batch = 0; batch < TURNS; batch += 100) {
      const submitted = await Promise.all(
        Array.from({ length: Math.min(100, TURNS - batch) }, (_, offset) =>
          post(api.url, '/v1/tenants/bench/turns', {
            agent: 'a',
            scope: `s${(batch + offset) % SCOPES}`,
            payload: { text: `@sleep 50\nturn ${batch + offset}` },
          }),
        ),
      );
      ids.push(...submitted.map((result) => result.body.run_id as string));
    }
    await Promise.all(
      ids.map((id) => fetch(`${api.url}/v1/tenants/bench/runs/${id}/wait?timeout_ms=120000`)),
    );
    const rate = TURNS / ((performance.now() - started) / 1000);
    // Max concurrency per scope from the database: claimed..finished intervals.
    const store = await openPostgresStore({ url: POSTGRES_URL, schema, poolSize: 1 });
    const rows = await store.pool.query<{ scope: string; started_at: number; finished_at: number }>(
      "SELECT scope, started_at, finished_at FROM runs WHERE status = 'succeeded'",
    );
    await store.close();
    let maxPerScope = 0;
    const byScope = new Map<string, { s: number; f: number }[]>();
    for (const row of rows.rows) {
      byScope.set(row.scope, [
        ...(byScope.get(row.scope) ?? []),
        { s: row.started_at, f: row.finished_at },
      ]);
    }
    for (const list of byScope.values()) {
      for (const run of list) {
        const concurrent = list.filter((other) => other.s <= run.s && other.f > run.s).length;
        maxPerScope = Math.max(maxPerScope, concurrent);
      }
    }
    return { rate, maxPerScope };
  } finally {
    await processes.stopAll();
    await dropSchemas([schema]);
  }
}

async function claimLatency(): Promise<{ p50: number; p99: number; plan: string }> {
  const schema = freshSchemaName('keel_bench_claim');
  const store = await openPostgresStore({ url: POSTGRES_URL, schema, poolSize: 2 });
  try {
    await store.createTenant('t', {});
    await store.putAgent('t', 'a', { model: 'fixture/echo' } as never);
    // 100k queued runs over 10k scopes, inserted in bulk (the claim is what is measured).
    await store.pool.query(
      `INSERT INTO runs (run_id, tenant, agent, scope, source, input, fingerprint, status, usage, created_at)
       SELECT 'r' || lpad(i::text, 7, '0'), 't', 'a', 's' || (i % 10000), 'api', '{}', 'f', 'queued', '{}', 0
       FROM generate_series(1, 100000) AS i`,
    );
    await store.pool.query('ANALYZE runs');
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    await client.query(`SET search_path TO "${schema}"`);
    const plan = (
      await client.query(`EXPLAIN (ANALYZE, BUFFERS) ${CLAIM_SQL}`, ['bench', 60_000, Date.now()])
    ).rows
      .map((row: Record<string, string>) => Object.values(row)[0])
      .join('\n');
    await client.end();
    const latencies: number[] = [];
    for (let index = 0; index < 1000; index += 1) {
      const started = performance.now();
      await store.claimNextRun({ owner: 'bench', lease_ms: 60_000 });
      latencies.push(performance.now() - started);
    }
    latencies.sort((a, b) => a - b);
    const at = (q: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
    return { p50: at(0.5), p99: at(0.99), plan };
  } finally {
    await store.close();
    await dropSchemas([schema]);
  }
}

export async function runScaleBench(): Promise<void> {
  mkdirSync(RESULTS, { recursive: true });
  const claim = await claimLatency();
  writeFileSync(join(RESULTS, 'scale-claim-explain.txt'), `${CLAIM_SQL}\n\n${claim.plan}\n`);
  console.log(
    `scale claim: 100k queued over 10k scopes, 1000 claims (each one transaction incl. commit): p50=${claim.p50.toFixed(2)} ms p99=${claim.p99.toFixed(2)} ms (EXPLAIN ANALYZE in bench/results/scale-claim-explain.txt)`,
  );
  const results: { workers: number; rate: number; maxPerScope: number }[] = [];
  for (const workers of [1, 2, 4]) {
    const { rate, maxPerScope } = await turnsPerSecond(workers);
    results.push({ workers, rate, maxPerScope });
    const base = results[0]?.rate ?? rate;
    console.log(
      `scale workers=${workers} turns=${TURNS} model_latency=50ms turns_per_s=${rate.toFixed(1)} speedup=${(rate / base).toFixed(2)}x max_per_scope=${maxPerScope}`,
    );
  }
  writeFileSync(
    join(RESULTS, 'scale.json'),
    `${JSON.stringify({ claim: { p50: claim.p50, p99: claim.p99 }, results }, null, 2)}\n`,
  );
}
