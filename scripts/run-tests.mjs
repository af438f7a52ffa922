// Runs every test file through node:test, TypeScript loaded by scripts/ts-hooks.mjs.
// Node 20's `node --test` neither expands globs nor fails when it finds no file, so the
// list is built here and an empty list is an error.
// Usage: node scripts/run-tests.mjs [substring filters…]
//
// Most files share a process with others: each process pays Node's start and the import
// of keel's modules through the TypeScript hooks (about 2 s of CPU), more than many files
// spend on their tests, and the suite is CPU-bound on two cores. The files in OWN_PROCESS
// run alone; the others share processes packed by their measured seconds. In a shared
// process the files are imported one after another and share node:test's root: their
// tests run one at a time in that order, but a file's top-level before() runs when it is
// imported (at the group's start) and its top-level after() when the whole group ends.
// So a shared file leaves process-wide state alone (environment, working directory,
// global handlers), names its ports, temp dirs and schemas uniquely, ends what it starts
// in its suites' after(), and clears its timers (README, "Quick start", npm test).
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { statfsSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = new URL('..', import.meta.url).pathname;
function collect(dir) {
  const found = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...collect(path));
    else if (name.endsWith('.test.ts')) found.push(relative(root, path));
  }
  return found;
}

// Wall seconds of the long files, three jobs at a time on this machine. Jobs start
// longest first (a file not named here counts SHARED_FILE_SECONDS): the runner starts
// them in the order given, and a long one started last runs on alone while the other
// slots sit empty.
const SECONDS = new Map([
  ['test/store-postgres.test.ts', 57],
  ['test/crash-postgres.test.ts', 53],
  ['test/console-e2e.test.ts', 52],
  ['test/crash-sweep.test.ts', 49],
  ['test/cli-resources.test.ts', 45],
  ['test/global-install.test.ts', 44],
  ['test/crash-random.test.ts', 34],
  ['test/process-restart.test.ts', 29],
  ['test/seeded-bugs.test.ts', 29],
  ['test/store-approvals.test.ts', 29],
  ['test/crash-points.test.ts', 28],
  ['test/crash-approvals-postgres.test.ts', 26],
  ['test/crash-approvals.test.ts', 26],
  ['test/mcp-e2e.test.ts', 25],
  ['test/scale-multiprocess.test.ts', 25],
  ['test/memory-prepare.test.ts', 25],
  ['test/tenant-export.test.ts', 25],
  ['test/cli-commands.test.ts', 24],
  ['test/wasm-killer.test.ts', 23],
  ['test/store-postgres-claim-race.test.ts', 23],
  ['test/crash-steering.test.ts', 23],
  ['test/approvals-postgres-workers.test.ts', 23],
  ['test/store-postgres-faults.test.ts', 22],
  ['test/crash-approvals-tools.test.ts', 21],
  ['test/mcp-own-servers.test.ts', 19],
  ['test/crash-approvals-deny.test.ts', 19],
  ['test/split-deployment.test.ts', 19],
  ['test/store-postgres-migrate-cli.test.ts', 19],
  ['test/telegram-adapter.test.ts', 18],
  ['test/backup-postgres.test.ts', 18],
  ['test/retention-soak.test.ts', 18],
  ['test/store-sqlite.test.ts', 17],
  ['test/telemetry-otlp.test.ts', 16],
  ['test/backup-restore.test.ts', 16],
  ['test/readme-walk.test.ts', 15],
  ['test/demo-run.test.ts', 15],
  ['test/usage-crash.test.ts', 14],
  ['test/compaction-crash.test.ts', 13],
  ['test/store-sqlite-disk-full.test.ts', 13],
  ['test/wasm-sandbox.test.ts', 12],
  ['test/crash-attempts.test.ts', 12],
  ['test/fork.test.ts', 10],
]);
/** Seconds a file not in SECONDS is counted for. */
const SHARED_FILE_SECONDS = 3;
// The files that run alone: wasm-sandbox measures its own process's memory; the crash
// harness keeps one set of children and temp dirs per process, and its cleanup() ends
// them all; and the long files whose top-level before() builds or starts something heavy
// (the global install, the README walk, MCP servers, the CLI tests' keel, wasm-killer's
// modules, migrate-cli's databases), which in a shared process would run at the group's
// start and live until its end. Measured, packing the harness's users and those files
// too (9 processes alone, then 1) was no faster: 511 s against 490 s for the test step.
const OWN_PROCESS = new Set([
  'test/approvals-postgres-workers.test.ts',
  'test/compaction-crash.test.ts',
  'test/crash-approvals-deny.test.ts',
  'test/crash-approvals-postgres.test.ts',
  'test/crash-approvals-tools.test.ts',
  'test/crash-approvals.test.ts',
  'test/crash-attempts.test.ts',
  'test/crash-points.test.ts',
  'test/crash-postgres.test.ts',
  'test/crash-random.test.ts',
  'test/crash-steering.test.ts',
  'test/crash-sweep.test.ts',
  'test/fork.test.ts',
  'test/scale-multiprocess.test.ts',
  'test/seeded-bugs.test.ts',
  'test/split-deployment.test.ts',
  'test/store-postgres-faults.test.ts',
  'test/store-sqlite-disk-full.test.ts',
  'test/telemetry-otlp.test.ts',
  'test/usage-crash.test.ts',
  'test/wasm-sandbox.test.ts',
  'test/cli-commands.test.ts',
  'test/cli-resources.test.ts',
  'test/global-install.test.ts',
  'test/mcp-e2e.test.ts',
  'test/mcp-own-servers.test.ts',
  'test/readme-walk.test.ts',
  'test/store-postgres-migrate-cli.test.ts',
  'test/wasm-killer.test.ts',
]);
/** The seconds a shared process is filled to: about the longest file that runs alone. */
const GROUP_SECONDS = 55;

/** KEEL_TEST_TMPDIR, else /dev/shm with 8 GiB free (the global install unpacks ~750 MB
 * there), else the system's temp dir. */
function testTempParent() {
  if (process.env.KEEL_TEST_TMPDIR) return process.env.KEEL_TEST_TMPDIR;
  try {
    const { bavail, bsize } = statfsSync('/dev/shm');
    accessSync('/dev/shm', constants.W_OK);
    if (bavail * bsize >= 8 * 2 ** 30) return '/dev/shm';
  } catch {
    // no /dev/shm (not Linux) or not writable: the system's temp dir
  }
  return tmpdir();
}

const filters = process.argv.slice(2);
const found = collect(join(root, 'test'));
const unknown = [...OWN_PROCESS, ...SECONDS.keys()].filter((file) => !found.includes(file));
if (unknown.length > 0) {
  console.error(`run-tests: names files that do not exist: ${unknown.join(', ')}`);
  process.exit(1);
}
const files = found
  .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
  .sort();
if (files.length === 0) {
  console.error('run-tests: no test files found');
  process.exit(1);
}

// Three jobs at a time on two cores: the suite waits as well as computes (leases
// expiring, children starting, retries backing off), so a third fills the cores the other
// two leave idle. KEEL_TEST_CONCURRENCY chooses another.
const concurrency = process.env.KEEL_TEST_CONCURRENCY ?? '3';
if (!/^[1-9][0-9]*$/.test(concurrency)) {
  console.error(
    `run-tests: KEEL_TEST_CONCURRENCY must be a whole number ≥ 1, not "${concurrency}"`,
  );
  process.exit(1);
}

// A keel the tests start without a config file or data dir of its own looks in the XDG
// directories (docs/configuration.md): point them into a temp dir, so no test reads a
// keel.toml of the real home nor writes data there. The group entries live there too.
// Everything the tests write to temp dirs (TMPDIR for every test process and what it
// starts: data dirs, SQLite files, packed tarballs) goes under one dir per run, removed
// at the end, on a RAM-backed tmpfs when the machine has one with room: the files are
// real files all the same, and a kill -9 loses nothing the page cache holds, but the
// suite's thousands of commits no longer wait on the disk's flushes (measured on this
// machine, ~12 % less CPU and ~17 % less time for the SQLite-heavy files).
// KEEL_TEST_TMPDIR names another parent.
const temp = mkdtempSync(join(testTempParent(), 'keel-tests-'));
const secondsOf = (file) => SECONDS.get(file) ?? SHARED_FILE_SECONDS;
const shared = files.filter((file) => !OWN_PROCESS.has(file));
const jobs = files.filter((file) => OWN_PROCESS.has(file)).map((file) => [file, secondsOf(file)]);
// Packed by seconds: longest file first into the group with the fewest seconds so far, so
// the groups end about together and the long files spread over them.
const total = shared.reduce((sum, file) => sum + secondsOf(file), 0);
// Never more groups than files: a group with none would start a process for nothing.
const groupCount = Math.min(shared.length, Math.ceil(total / GROUP_SECONDS));
const groups = Array.from({ length: groupCount }, () => ({
  members: [],
  seconds: 0,
}));
const bySeconds = [...shared].sort((a, b) => secondsOf(b) - secondsOf(a) || a.localeCompare(b));
for (const file of bySeconds) {
  const group = groups.reduce(
    (least, next) => (next.seconds < least.seconds ? next : least),
    groups[0],
  );
  group.members.push(file);
  group.seconds += secondsOf(file);
}
mkdirSync(join(temp, 'groups'));
mkdirSync(join(temp, 'tmp'));
for (const [index, { members, seconds }] of groups.entries()) {
  const entry = join(temp, 'groups', `shared-${String(index + 1).padStart(2, '0')}.mjs`);
  // Each file named on stderr (a comment in the report) as it loads: a crash or an import
  // that fails is then placed at its file, not only at the group.
  const imports = members.map(
    (file) =>
      `console.error(${JSON.stringify(`${basename(entry)}: loading ${file}`)});\n` +
      `await import(${JSON.stringify(pathToFileURL(join(root, file)).href)});`,
  );
  writeFileSync(entry, `${imports.join('\n')}\n`);
  // Named here: a file that crashes its process fails the whole group under this name.
  console.error(`run-tests: ${basename(entry)}: ${members.join(' ')}`);
  jobs.push([entry, seconds]);
}
jobs.sort((a, b) => b[1] - a[1]);
console.error(
  `run-tests: ${files.length} test files, ${jobs.length - groups.length} in a process of their own, ${shared.length} in ${groups.length} shared ones`,
);

// Started with the TypeScript hooks of ts-register.mjs (lighter than tsx, see ts-hooks.mjs),
// so every test process the runner forks inherits that `--import`.
const result = spawnSync(
  process.execPath,
  [
    '--import',
    pathToFileURL(join(root, 'scripts/ts-register.mjs')).href,
    join(root, 'scripts/test-jobs.mjs'),
    concurrency,
    ...jobs.map(([file]) => file),
  ],
  {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      XDG_CONFIG_HOME: join(temp, 'config'),
      XDG_DATA_HOME: join(temp, 'data'),
      TMPDIR: join(temp, 'tmp'),
    },
  },
);
try {
  rmSync(temp, { recursive: true, force: true });
} catch (error) {
  // A mount a test left behind (the disk-full test's tmpfs) must not fail the run.
  console.error(`run-tests: could not remove ${temp}: ${error.message}`);
}
process.exit(result.status ?? 1);
