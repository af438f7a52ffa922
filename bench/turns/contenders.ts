// The servers of the turn benchmark, each started as its own process on a free loopback
// port with a fresh data dir: keel (`keel serve`, SQLite or PostgreSQL with an api and a
// worker process), the floor (floor-server.ts) and the peers (peers.ts).

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Child } from './children.ts';
import { startChild, stopChild } from './children.ts';
import { RUNNING_NODE, nodeCommandFor, type NodeRuntime } from './node-runtimes.ts';
import type { ContenderKind } from './protocols.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const KEEL_BIN = join(ROOT, 'bin/keel.js');
const TSX = ['--import', 'tsx'];

/**
 * How a contender's process is started: which Node (default: the one running the bench;
 * KEEL_BENCH_NODES, node-runtimes.ts) and flags before the script (e.g. `--import` of a
 * preload that measures the event loop, stream-latency.ts).
 */
export interface NodeCommand {
  node?: NodeRuntime;
  nodeFlags?: string[];
  /** More environment for the process (the caller's KEEL_* settings are never passed). */
  env?: Record<string, string>;
}

export interface Running {
  kind: ContenderKind;
  url: string;
  /** Processes whose CPU, writes and memory are the server's (sampled before and after). */
  pids(): number[];
  stop(): Promise<void>;
}

/** The environment without the caller's KEEL_* settings. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.startsWith('KEEL_')) env[key] = value;
  return { ...env, ...extra };
}

export async function startFixtureModel(
  options: NodeCommand & { chunkDelayMs?: number } = {},
): Promise<Child> {
  const delay = options.chunkDelayMs ? ['--chunk-delay-ms', String(options.chunkDelayMs)] : [];
  const [command, args] = nodeCommandFor(options.node ?? RUNNING_NODE, [
    ...(options.nodeFlags ?? []),
    KEEL_BIN,
    'fixture-model',
    '--listen',
    '127.0.0.1:0',
    ...delay,
  ]);
  return startChild(command, args, {
    env: cleanEnv(),
    ready: /fixture model listening on (\S+)/,
  });
}

export interface KeelOptions extends NodeCommand {
  dir: string;
  durability: 'full' | 'process';
  /** The fixture-model server's URL when the model is reached over HTTP. */
  modelUrl?: string;
  /** That provider's `stream` setting (keel's default, "when-watched", when absent). */
  modelStream?: boolean | 'when-watched';
  /** postgres://…?schema=…: an api process and one worker process. */
  storeUrl?: string;
  concurrency: number;
  /** Another checkout of keel to run instead of this one (KEEL_BENCH_BASELINE). */
  checkout?: string;
}

function keelToml(options: KeelOptions, role: string): string {
  return [
    'listen = "127.0.0.1:0"',
    `data_dir = ${JSON.stringify(join(options.dir, role))}`,
    '[store]',
    `durability = "${options.durability}"`,
    ...(options.storeUrl ? [`url = ${JSON.stringify(options.storeUrl)}`] : []),
    '[workers]',
    `concurrency = ${options.concurrency}`,
    '[tenant_limits]',
    // One tenant takes all the load: its request bucket must not be what is measured.
    'requests_per_s = 1000000',
    'request_burst = 1000000',
    '[http]',
    'max_streams_per_tenant = 10000',
    // The load comes from one address, with up to a thousand event streams open at once.
    'max_connections = 100000',
    'max_connections_per_address = 100000',
    '[memory]',
    'embedder = "hash"',
    '[log]',
    'level = "info"',
    ...(options.modelUrl
      ? [
          '[providers.local]',
          'type = "openai-compatible"',
          `base_url = "${options.modelUrl}/v1"`,
          ...(options.modelStream !== undefined
            ? [`stream = ${JSON.stringify(options.modelStream)}`]
            : []),
        ]
      : []),
    '',
  ].join('\n');
}

async function startKeelProcess(options: KeelOptions, role: string): Promise<Child> {
  const config = join(options.dir, `keel-${role}.toml`);
  writeFileSync(config, keelToml(options, role));
  const bin = options.checkout ? join(options.checkout, 'bin/keel.js') : KEEL_BIN;
  // KEEL_BENCH_PROFILE=<dir>: keel writes a V8 CPU profile there when it stops
  // (summarised by `tsx bench/turns/profile-summary.ts <file>`).
  const profile = process.env.KEEL_BENCH_PROFILE;
  const flags = [
    ...(options.nodeFlags ?? []),
    ...(profile ? ['--cpu-prof', '--cpu-prof-dir', profile] : []),
  ];
  const [command, args] = nodeCommandFor(options.node ?? RUNNING_NODE, [
    ...flags,
    bin,
    'serve',
    '--config',
    config,
    '--role',
    role,
  ]);
  return startChild(command, args, {
    env: cleanEnv(options.env),
    ready: /keel listening on (\S+)|keel (?:worker|started)/,
  });
}

export async function startKeelContender(options: KeelOptions): Promise<Running> {
  const roles = options.storeUrl ? ['api', 'worker'] : ['all'];
  const children: Child[] = [];
  try {
    for (const role of roles) children.push(await startKeelProcess(options, role));
  } catch (error) {
    await Promise.all(children.map((child) => stopChild(child)));
    throw error;
  }
  return {
    kind: 'keel',
    url: children[0]?.ready ?? '',
    pids: () => children.map((child) => child.pid),
    stop: async () => {
      await Promise.all(children.map((child) => stopChild(child)));
    },
  };
}

export async function startFloor(
  dir: string,
  durability: 'full' | 'process',
  commitsPerTurn: number,
  node: NodeRuntime = RUNNING_NODE,
): Promise<Running> {
  const [command, args] = nodeCommandFor(node, [
    ...TSX,
    join(ROOT, 'bench/turns/floor-server.ts'),
    dir,
    durability,
    String(commitsPerTurn),
  ]);
  const child = await startChild(command, args, {
    env: cleanEnv(),
    cwd: ROOT,
    ready: /floor listening on (\S+)/,
  });
  return { kind: 'floor', url: child.ready, pids: () => [child.pid], stop: () => stopChild(child) };
}

export const LOAD_SCRIPT = join(ROOT, 'bench/turns/load.ts');
export const LOAD_ARGS = TSX;
export { ROOT };

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const modified = statSync(join(entry.parentPath, entry.name)).mtimeMs;
    if (modified > newest) newest = modified;
  }
  return newest;
}

/**
 * Builds `checkout`'s dist/ when bin/keel.js would otherwise run the sources through tsx
 * (as an installed keel runs dist/, so does the benchmark).
 */
export function ensureBuilt(checkout: string = ROOT): void {
  const stamp = join(checkout, 'dist/.build-stamp');
  if (existsSync(stamp) && statSync(stamp).mtimeMs > newestMtime(join(checkout, 'src'))) return;
  console.log(`building ${checkout}dist/ (keel serve runs the compiled code)…`);
  const built = spawnSync(process.execPath, [join(checkout, 'scripts/build.mjs')], {
    cwd: checkout,
    stdio: 'inherit',
  });
  if (built.status !== 0) throw new Error(`the build of ${checkout} failed`);
}
