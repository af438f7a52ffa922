// Which Node a server contender of the turn benchmark runs on. KEEL_BENCH_NODES=20,24
// runs every server contender (keel, the floor, the peers) once on each, side by side in
// the same round, its name suffixed "@node20" / "@node24"; unset, each runs once on the
// Node running the benchmark, unsuffixed. The load generator and the fixture model always
// run on that Node: they are the same for every contender.
//
// A major equal to the running Node's is that binary; 24 is the registry's `node` package
// installed in bench/node24/ by `npm run bench:node24-install`, preloaded with
// bench/node24/better-sqlite3-hook.mjs so keel loads the better-sqlite3 built for it.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const NODE24_DIR = join(ROOT, 'bench/node24');

export interface NodeRuntime {
  /** The major version, as named in KEEL_BENCH_NODES. */
  major: number;
  /** The binary's own `process.versions.node`. */
  version: string;
  /** Appended to the contender's name: "" when only the running Node is benchmarked. */
  suffix: string;
  /** The binary to spawn. */
  command: string;
  /** Node flags placed before every other argument. */
  flags: string[];
}

const RUNNING_MAJOR = Number(process.versions.node.split('.')[0]);

/** The Node running the benchmark, unsuffixed: every contender's runtime by default. */
export const RUNNING_NODE: NodeRuntime = {
  major: RUNNING_MAJOR,
  version: process.versions.node,
  suffix: '',
  command: process.execPath,
  flags: [],
};

function runtimeFor(major: number, suffix: string): NodeRuntime {
  if (major === RUNNING_MAJOR) return { ...RUNNING_NODE, suffix };
  if (major === 24) {
    const command = join(NODE24_DIR, 'node_modules/node/bin/node');
    const addon = join(NODE24_DIR, 'node_modules/better-sqlite3/build/Release');
    if (!existsSync(command) || !existsSync(addon))
      throw new Error('KEEL_BENCH_NODES: Node 24 is not installed: npm run bench:node24-install');
    const version = spawnSync(command, ['--version'], { encoding: 'utf8' }).stdout.trim();
    if (!version.startsWith('v24.'))
      throw new Error(`KEEL_BENCH_NODES: ${command} reports "${version}", not Node 24`);
    return {
      major,
      version: version.slice(1),
      suffix,
      command,
      flags: ['--import', join(NODE24_DIR, 'better-sqlite3-hook.mjs')],
    };
  }
  throw new Error(
    `KEEL_BENCH_NODES: no Node ${major} here (the running Node is ${RUNNING_MAJOR}; bench/node24 gives 24)`,
  );
}

/** The runtimes named by `value` (KEEL_BENCH_NODES), in that order. */
export function parseBenchNodes(value: string | undefined): NodeRuntime[] {
  const majors = (value ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  if (majors.length === 0) return [RUNNING_NODE];
  return majors.map((part) => {
    const major = Number(part.replace(/^v/, ''));
    if (!Number.isInteger(major) || major <= 0)
      throw new Error(`KEEL_BENCH_NODES: "${part}" is not a Node major version`);
    return runtimeFor(major, `@node${major}`);
  });
}

/** The command and arguments that run `args` (a script and its arguments) on `node`. */
export function nodeCommandFor(node: NodeRuntime, args: string[]): [string, string[]] {
  return [node.command, [...node.flags, ...args]];
}
