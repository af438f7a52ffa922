// The suite's own runner (README, npm test): scripts/test-jobs.mjs runs jobs in the order
// given and exits 1 when a test fails; run-tests.mjs refuses a KEEL_TEST_CONCURRENCY that
// is not a whole number before running anything; settledWithin (test/helpers/wait-for.ts)
// clears its timer, so a test process whose bound was never reached still exits at once;
// the TypeScript hooks the test processes load (scripts/ts-hooks.mjs) strip types, point
// stack traces at the .ts lines and compile an edited file afresh; under the runner, temp
// files go to the run's own dir.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

const ROOT = new URL('..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'keel-test-runner-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The environment of a top-level run: node:test's run() skips its files in a child of one. */
function topLevelEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

function testFile(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `import { it } from 'node:test';\n${body}\n`);
  return path;
}

describe('the test runner', () => {
  it('runs jobs in the order given (not by name) and exits 1 when a test fails', () => {
    const last = testFile('a-last.test.mjs', "it('a runs second', () => {});");
    const first = testFile(
      'z-first.test.mjs',
      "it('z runs first and fails', () => { throw new Error('seeded'); });",
    );
    const result = spawnSync(process.execPath, ['scripts/test-jobs.mjs', '1', first, last], {
      cwd: ROOT,
      encoding: 'utf8',
      env: topLevelEnv(),
    });
    assert.equal(result.status, 1, result.stdout + result.stderr);
    const z = result.stdout.indexOf('not ok 1 - z runs first and fails');
    const a = result.stdout.indexOf('ok 2 - a runs second');
    assert.ok(z !== -1 && a > z, result.stdout);
    assert.match(result.stdout, /^# tests 2$/m);
  });

  it('exits 0 when every test passed', () => {
    const passing = testFile('passing.test.mjs', "it('passes', () => {});");
    const result = spawnSync(process.execPath, ['scripts/test-jobs.mjs', '1', passing], {
      cwd: ROOT,
      encoding: 'utf8',
      env: topLevelEnv(),
    });
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /^# pass 1$/m);
  });

  it('refuses a KEEL_TEST_CONCURRENCY that is not a whole number ≥ 1, naming it', () => {
    for (const value of ['0', 'three', '-1']) {
      const result = spawnSync(process.execPath, ['scripts/run-tests.mjs', 'test-runner'], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, KEEL_TEST_CONCURRENCY: value },
      });
      assert.equal(result.status, 1, value);
      assert.match(result.stderr, /KEEL_TEST_CONCURRENCY must be a whole number ≥ 1/);
      assert.doesNotMatch(result.stdout, /^# tests/m, 'no test ran');
    }
  });

  it("under the runner, a test process writes temp files into the run's own dir", (t) => {
    // run-tests.mjs points XDG_DATA_HOME at <run dir>/data and TMPDIR at <run dir>/tmp,
    // on /dev/shm when there is room (or KEEL_TEST_TMPDIR), and removes the run dir.
    const data = process.env.XDG_DATA_HOME ?? '';
    if (!/\/keel-tests-[^/]+\/data$/.test(data)) {
      t.skip('not started by scripts/run-tests.mjs');
      return;
    }
    const run = join(data, '..');
    assert.equal(tmpdir(), join(run, 'tmp'));
    const parent = process.env.KEEL_TEST_TMPDIR;
    if (parent) assert.equal(join(run, '..'), join(parent));
    else if (existsSync('/dev/shm')) {
      const { bavail, bsize } = statfsSync('/dev/shm');
      // Measured while the suite runs, so with the suite's own files in it: room still left.
      if (bavail * bsize >= 8 * 2 ** 30) assert.match(run, /^\/dev\/shm\//);
    }
  });

  it('settledWithin clears its timer: a process waiting with a 5-minute bound exits at once', () => {
    const script = join(dir, 'bounded.mts');
    writeFileSync(
      script,
      [
        `import { settledWithin } from ${JSON.stringify(join(ROOT, 'test/helpers/wait-for.ts'))};`,
        "console.log(await settledWithin(Promise.resolve('settled'), 300_000));",
      ].join('\n'),
    );
    // The bound on spawnSync only ends a process the timer would hold: a helper that left
    // its 300 s timer pending is killed after 60 s, and the test fails on the signal.
    const result = spawnSync(process.execPath, ['--import', 'tsx', script], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(result.signal, null, 'the process was held open by a pending timer');
    assert.equal(result.stdout.trim(), 'settled');
  });

  it('the TypeScript hooks run a .ts file, name its lines in stack traces and see its edits', () => {
    const script = join(dir, 'typed.ts');
    const register = join(ROOT, 'scripts/ts-register.mjs');
    const source = (answer: number): string =>
      [
        'type Answer = { value: number };',
        `const answer: Answer = { value: ${answer} };`,
        'console.log(answer.value);',
        '',
        "if (process.argv[2] === 'throw') throw new Error('from line five');",
      ].join('\n');
    const runScript = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', register, script, ...args], {
        cwd: ROOT,
        encoding: 'utf8',
        // This test's compiled files go with its temp dir, not into the checkout's cache.
        env: { ...process.env, KEEL_TS_CACHE: join(dir, 'ts-cache') },
      });
    writeFileSync(script, source(41));
    const first = runScript();
    assert.equal(first.status, 0, first.stderr);
    assert.equal(first.stdout.trim(), '41');
    // The same path with new content: a cache keyed on the path alone would print 41.
    writeFileSync(script, source(42));
    const thrown = runScript('throw');
    assert.equal(thrown.stdout.trim(), '42');
    assert.match(thrown.stderr, new RegExp(`${script.replaceAll('.', '\\.')}:5\\b`));
  });
});
