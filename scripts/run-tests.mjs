// Runs every test file through node:test + tsx. Node 20's `node --test` neither expands
// globs nor fails when it finds no file, so the list is built here and an empty list
// is an error. Usage: node scripts/run-tests.mjs [substring filters…]
//
// Order: `node --test` sorts its files by name, so with two lanes a long file that sorts
// late starts late and the other lane idles at the end. The files listed in SLOW_FIRST
// (the longest, longest first) start first, the rest follow by name; that is why this
// script drives node:test's run() in a child process (with tsx, which run() passes on to
// every test file's process) instead of `node --test`. The child does what `node --test`
// does: two files at a time, 300 s per file, TAP when stdout is not a terminal (spec when
// it is), exit code 1 when a test failed.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const RUN_FLAG = '--run-files';

// Measured on the 2-core machine (seconds per file in a full run), longest first. A file
// missing from this list only starts later; a listed file that is gone is ignored.
const SLOW_FIRST = [
  'test/crash-postgres.test.ts',
  'test/crash-random.test.ts',
  'test/crash-points.test.ts',
  'test/crash-approvals-deny.test.ts',
  'test/console-e2e.test.ts',
  'test/cli-resources.test.ts',
  'test/crash-approvals-postgres.test.ts',
  'test/crash-approvals.test.ts',
  'test/crash-steering.test.ts',
  'test/crash-attempts.test.ts',
];

if (process.argv[2] === RUN_FLAG) {
  const { run } = await import('node:test');
  const { spec, tap } = await import('node:test/reporters');
  const stream = run({
    files: process.argv.slice(3).map((file) => join(root, file)),
    concurrency: 2,
    timeout: 300_000,
  });
  stream.on('test:fail', (data) => {
    if (data.todo === undefined || data.todo === false) process.exitCode = 1;
  });
  stream.compose(process.stdout.isTTY ? new spec() : tap).pipe(process.stdout);
} else {
  const collect = (dir) => {
    const found = [];
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) found.push(...collect(path));
      else if (name.endsWith('.test.ts')) found.push(relative(root, path));
    }
    return found;
  };
  const filters = process.argv.slice(2);
  const found = collect(join(root, 'test'))
    .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
    .sort();
  if (found.length === 0) {
    console.error('run-tests: no test files found');
    process.exit(1);
  }
  const files = [
    ...SLOW_FIRST.filter((file) => found.includes(file)),
    ...found.filter((file) => !SLOW_FIRST.includes(file)),
  ];
  console.error(`run-tests: ${files.length} test files`);
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', new URL(import.meta.url).pathname, RUN_FLAG, ...files],
    { cwd: root, stdio: 'inherit' },
  );
  process.exit(result.status ?? 1);
}
