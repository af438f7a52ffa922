// Runs test files with node:test's run() in exactly the order given (`node --test`
// sorts its files by name), N at a time, each in a process of its own, and reports TAP
// on stdout; exits 1 when any test failed. A job still running after 600 s fails: the
// bound on a hang, in a test or outside one (a test process started this way does not
// apply `--test-timeout` to its own tests on Node 20); the longest job takes about 110 s
// on the 2-core machine. Started by run-tests.mjs with the TypeScript hooks
// (ts-register.mjs), whose `--import` the processes run() forks inherit.
//   node --import ./scripts/ts-register.mjs scripts/test-jobs.mjs <concurrency> <file>…
import { run } from 'node:test';
import { tap } from 'node:test/reporters';

const [concurrency, ...files] = process.argv.slice(2);
const stream = run({ files, concurrency: Number(concurrency), timeout: 600_000 });
stream.on('test:fail', (event) => {
  if (!event.todo) process.exitCode = 1;
});
stream.compose(tap).pipe(process.stdout);
