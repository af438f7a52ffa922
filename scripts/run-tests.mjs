// Runs every test file through node:test + tsx. Node 20's `node --test` neither expands
// globs nor fails when it finds no file, so the list is built here and an empty list
// is an error. Usage: node scripts/run-tests.mjs [substring filters…]
//
// Most files share a process with others: each process pays Node's start and the import
// of keel's modules through the TypeScript hooks (ts-hooks.mjs; about 1 s of CPU), more than many files spend
// on their tests, and the suite is CPU-bound on two cores. The files in OWN_PROCESS run
// alone: the long ones, whose work is in the children they start, and those that share
// something per process. In a shared process the files are imported one after another
// and share node:test's root: their tests run one at a time in that order, but a file's
// top-level before() runs when it is imported (at the group's start) and its top-level
// after() when the whole group ends. So a shared file leaves process-wide state alone
// (environment, working directory, global handlers), names its ports, temp dirs and
// schemas uniquely, and clears its timers (README, "Quick start", npm test).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
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

// With their wall time three at a time on this machine, in seconds. Jobs start longest
// first (a shared process counted at SHARED_FILE_SECONDS per file): the runner starts
// them in the order given, and a long one started last runs on alone while the other
// slots sit empty.
const OWN_PROCESS = [
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
  ['test/mcp-e2e.test.ts', 25],
  ['test/scale-multiprocess.test.ts', 25],
  ['test/memory-prepare.test.ts', 25],
  ['test/tenant-export.test.ts', 25],
  ['test/cli-commands.test.ts', 24],
  ['test/wasm-killer.test.ts', 23],
  ['test/store-postgres-claim-race.test.ts', 23],
  ['test/store-postgres-faults.test.ts', 22],
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
  // Shorter, but alone for what they share: the crash harness keeps one set of children
  // and temp dirs per process (its cleanup() ends them all), and wasm-sandbox measures
  // its own process's memory. Seconds from a run with every file alone.
  ['test/crash-approvals.test.ts', 26],
  ['test/crash-steering.test.ts', 23],
  ['test/approvals-postgres-workers.test.ts', 23],
  ['test/crash-approvals-tools.test.ts', 21],
  ['test/usage-crash.test.ts', 14],
  ['test/compaction-crash.test.ts', 13],
  ['test/store-sqlite-disk-full.test.ts', 13],
  ['test/wasm-sandbox.test.ts', 12],
  ['test/crash-attempts.test.ts', 12],
  ['test/fork.test.ts', 10],
];
/** Seconds a shared file is counted for when the groups are ordered among the others. */
const SHARED_FILE_SECONDS = 3;
/** Shared files per process: enough to spread the start, few enough to balance slots. */
const FILES_PER_GROUP = 12;

const filters = process.argv.slice(2);
const found = collect(join(root, 'test'));
const unknown = OWN_PROCESS.filter(([file]) => !found.includes(file)).map(([file]) => file);
if (unknown.length > 0) {
  console.error(`run-tests: OWN_PROCESS names files that do not exist: ${unknown.join(', ')}`);
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
const temp = mkdtempSync(join(tmpdir(), 'keel-tests-'));
const own = new Map(OWN_PROCESS);
const shared = files.filter((file) => !own.has(file));
const groupCount = Math.ceil(shared.length / FILES_PER_GROUP);
const jobs = files.filter((file) => own.has(file)).map((file) => [file, own.get(file)]);
mkdirSync(join(temp, 'groups'));
for (let group = 0; group < groupCount; group += 1) {
  // Dealt round the groups by name, so each gets a like mix of the directory.
  const members = shared.filter((_, index) => index % groupCount === group);
  const entry = join(temp, 'groups', `shared-${String(group + 1).padStart(2, '0')}.mjs`);
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
  jobs.push([entry, members.length * SHARED_FILE_SECONDS]);
}
jobs.sort((a, b) => b[1] - a[1]);
console.error(
  `run-tests: ${files.length} test files, ${jobs.length - groupCount} in a process of their own, ${shared.length} in ${groupCount} shared ones`,
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
    },
  },
);
rmSync(temp, { recursive: true, force: true });
process.exit(result.status ?? 1);
