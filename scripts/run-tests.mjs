// Runs every test file through node:test + tsx. Node 20's `node --test` neither expands
// globs nor fails when it finds no file, so the list is built here and an empty list
// is an error. Usage: node scripts/run-tests.mjs [substring filters…]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

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

const filters = process.argv.slice(2);
const files = collect(join(root, 'test'))
  .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
  .sort();
if (files.length === 0) {
  console.error('run-tests: no test files found');
  process.exit(1);
}
console.error(`run-tests: ${files.length} test files`);
// A keel the tests start without a config file or data dir of its own looks in the XDG
// directories (docs/configuration.md): point them into a temp dir, so no test reads a
// keel.toml of the real home nor writes data there.
const xdg = mkdtempSync(join(tmpdir(), 'keel-tests-xdg-'));
// Three files at a time on two cores: the suite waits as well as computes (leases
// expiring, children starting, retries backing off), so a third file fills the cores
// the other two leave idle: 620–672 s at two measured against 512–558 s at three on this
// machine (README, "Run the tests"). KEEL_TEST_CONCURRENCY chooses another.
const concurrency = process.env.KEEL_TEST_CONCURRENCY ?? '3';
if (!/^[1-9][0-9]*$/.test(concurrency)) {
  console.error(
    `run-tests: KEEL_TEST_CONCURRENCY must be a whole number ≥ 1, not "${concurrency}"`,
  );
  process.exit(1);
}
const result = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-timeout=300000',
    ...files,
  ],
  {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      XDG_CONFIG_HOME: join(xdg, 'config'),
      XDG_DATA_HOME: join(xdg, 'data'),
    },
  },
);
rmSync(xdg, { recursive: true, force: true });
process.exit(result.status ?? 1);
