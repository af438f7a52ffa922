// `npm run bench -- soak`: a bounded soak of `keel serve` (not in CI). keel runs as a
// child process on SQLite; bench/soak-load.ts, a second process, drives mixed load
// (turns, slow clients trickling bodies, SSE connect/disconnect churn) for the whole
// run, while keel is SIGKILLed and restarted KILLS times in the first half. RSS and
// open file descriptors of the keel process are read from /proc every few seconds;
// the report compares the last life's values after warm-up with its values at the
// end, and again once the load has stopped, and says whether they are flat.
//
//   KEEL_BENCH_SOAK_SECONDS=180 (≤ 600)  KEEL_BENCH_SOAK_KILLS=3  npm run bench -- soak

import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { formatTable, writeResult } from './support.ts';

const SECONDS = Math.min(600, Number(process.env.KEEL_BENCH_SOAK_SECONDS ?? 180));
const KILLS = Number(process.env.KEEL_BENCH_SOAK_KILLS ?? 3);
const SAMPLE_MS = 5_000;
/** A life's first samples are warm-up (JIT, caches, SQLite page cache). */
const WARMUP_MS = 15_000;
const ROOT = new URL('..', import.meta.url).pathname;

interface Sample {
  t_s: number;
  life: number;
  rss_mb: number;
  fds: number;
}

function rssMb(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address ? address.port : 0;
}

function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('KEEL_')) env[key] = value;
  }
  return { ...env, KEEL_LOG_LEVEL: 'warn' };
}

/** Starts `keel serve` and resolves once it printed its ready line. */
async function startKeel(
  dataDir: string,
  config: string,
  port: number,
): Promise<{ child: ChildProcess; pid: number }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--listen', `127.0.0.1:${port}`],
    {
      cwd: ROOT,
      env: { ...childEnv(), KEEL_DATA_DIR: dataDir, KEEL_CONFIG: config },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  // Only the tail is kept: the soak must not grow this process either.
  let tail = '';
  const keep = (chunk: Buffer): void => {
    tail = (tail + chunk.toString()).slice(-4000);
  };
  child.stderr?.on('data', keep);
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      keep(chunk);
      if (tail.includes('keel listening on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`keel exited (${code}) before ready: ${tail}`)));
  });
  return { child, pid: child.pid ?? 0 };
}

async function setup(url: string): Promise<void> {
  const put = async (method: string, path: string, body: unknown): Promise<void> => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (response.status >= 300 && response.status !== 409) {
      throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    }
  };
  await put('POST', '/v1/tenants', { name: 'soak' });
  await put('PUT', '/v1/tenants/soak/agents/echo', { model: 'fixture/echo' });
}

function killed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

export async function runSoakBench(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'keel-soak-'));
  const config = join(dataDir, 'keel.toml');
  // Short request deadlines so the slow clients are cut many times within the run.
  writeFileSync(
    config,
    '[http]\nrequest_timeout_ms = 5000\nheaders_timeout_ms = 3000\nidle_timeout_ms = 10000\n',
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = Date.now();
  const elapsed = (): number => (Date.now() - started) / 1000;
  let life = 1;
  let keel = await startKeel(dataDir, config, port);
  let lifeStarted = Date.now();
  await setup(url);

  const load = spawn(
    process.execPath,
    ['--import', 'tsx', 'bench/soak-load.ts', url, String(SECONDS)],
    {
      cwd: ROOT,
      env: childEnv(),
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let loadOutput = '';
  load.stdout?.on('data', (chunk: Buffer) => (loadOutput += chunk.toString()));
  const loadDone = killed(load);

  // Kills spread over the first half; the last life runs the second half undisturbed.
  const killAt = Array.from(
    { length: KILLS },
    (_, index) => ((index + 1) * SECONDS) / (2 * (KILLS + 1)),
  );
  const samples: Sample[] = [];
  const restartsMs: number[] = [];
  console.log(`soak: ${SECONDS} s, ${KILLS} SIGKILL restarts, keel on ${url}, data ${dataDir}`);
  while (elapsed() < SECONDS) {
    await delay(SAMPLE_MS);
    if (killAt.length > 0 && elapsed() >= (killAt[0] ?? Infinity)) {
      killAt.shift();
      keel.child.kill('SIGKILL');
      await killed(keel.child);
      const restart = Date.now();
      keel = await startKeel(dataDir, config, port);
      restartsMs.push(Date.now() - restart);
      life += 1;
      lifeStarted = Date.now();
      console.log(
        `  ${elapsed().toFixed(0)} s: SIGKILL → restarted (life ${life}) in ${restartsMs.at(-1)} ms`,
      );
      continue;
    }
    samples.push({
      t_s: Math.round(elapsed()),
      life,
      rss_mb: rssMb(keel.pid),
      fds: openFds(keel.pid),
    });
  }
  await loadDone;
  // Once the load has stopped and its sockets are gone, keel should be back at rest.
  await delay(SAMPLE_MS);
  const rest = { rss_mb: rssMb(keel.pid), fds: openFds(keel.pid) };
  keel.child.kill('SIGTERM');
  await killed(keel.child);
  rmSync(dataDir, { recursive: true, force: true });

  const lastLife = samples.filter(
    (sample) => sample.life === life && sample.t_s * 1000 >= lifeStarted - started + WARMUP_MS,
  );
  const first = lastLife[0];
  const last = lastLife.at(-1);
  const counts = JSON.parse(loadOutput.trim().split('\n').at(-1) ?? '{}') as Record<string, number>;
  if (!first || !last) throw new Error('soak: too short to sample the last life after warm-up');
  // Flat: under load, RSS within 20 % (+16 MB of allocator slack) and fds within 16
  // (sockets in flight) of the warm start; at rest, fds no more than at the warm start.
  const rssFlat = last.rss_mb <= first.rss_mb * 1.2 + 16;
  const fdsFlat = last.fds <= first.fds + 16 && rest.fds <= first.fds;
  console.log(
    formatTable(
      ['t (s)', 'life', 'RSS (MB)', 'open fds'],
      samples.map((s) => [s.t_s, s.life, s.rss_mb, s.fds]),
    ),
  );
  console.log(
    formatTable(
      ['', 'RSS (MB)', 'open fds'],
      [
        ['last life, after warm-up', first.rss_mb, first.fds],
        ['last life, end of load', last.rss_mb, last.fds],
        ['after the load stopped', rest.rss_mb, rest.fds],
      ],
    ),
  );
  console.log(`load: ${JSON.stringify(counts)}; restarts took ${restartsMs.join(', ')} ms`);
  console.log(`flat: RSS ${rssFlat ? 'yes' : 'NO'}, fds ${fdsFlat ? 'yes' : 'NO'}`);
  const path = writeResult('soak', {
    seconds: SECONDS,
    kills: KILLS,
    samples,
    warm: first,
    end: last,
    rest,
    load: counts,
    restarts_ms: restartsMs,
    flat: { rss: rssFlat, fds: fdsFlat },
  });
  console.log(`results: ${path}`);
  if (!rssFlat || !fdsFlat) process.exitCode = 1;
}
