// Test-only switches can never act in a production process: the real `keel serve`
// refuses the seeded-bug and fault-point env vars (it used to run with fencing off under
// KEEL_TEST_SEEDED_BUGS=no_fencing), and an unknown seeded bug name is refused wherever
// seeded bugs are injected (the test entry, startKeel, both stores' open functions).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { isKeelError } from '../src/errors.ts';
import { openSqliteStore } from '../src/store/sqlite/index.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'keel-switches-'));
  dirs.push(dir);
  return dir;
}

/**
 * Starts `entry` as `keel serve` would run and waits until it either prints its ready
 * line (then it is killed: it served) or exits on its own.
 */
function serveOutcome(
  entry: string[],
  env: Record<string, string>,
): Promise<{ served: boolean; code: number | null; stderr: string }> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('KEEL_')),
  );
  const args = [...entry, '--listen', '127.0.0.1:0', '--data-dir', tempDir()];
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: ROOT,
    env: { ...clean, KEEL_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let served = false;
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (!served && /^keel listening on /m.test(stdout)) {
      served = true;
      child.kill('SIGKILL');
    }
  });
  return new Promise((resolve) =>
    child.once('exit', (code) => resolve({ served, code: served ? null : code, stderr })),
  );
}

const KEEL_SERVE = ['src/cli/main.ts', 'serve'];
const TEST_SERVE = ['test/helpers/keel-test-serve.ts'];

describe('test-only switches', () => {
  it('a real keel serve with KEEL_TEST_SEEDED_BUGS=no_fencing refuses to start', async () => {
    const outcome = await serveOutcome(KEEL_SERVE, { KEEL_TEST_SEEDED_BUGS: 'no_fencing' });
    console.log(`keel serve + no_fencing: served=${outcome.served} exit=${outcome.code}`);
    assert.equal(outcome.served, false, 'keel serve ran with a seeded bug in its environment');
    assert.equal(outcome.code, 1);
    assert.match(outcome.stderr, /KEEL_TEST_SEEDED_BUGS: test-only switches, refused/);
  });

  it('a real keel serve with fault points armed refuses to start', async () => {
    const outcome = await serveOutcome(KEEL_SERVE, {
      KEEL_TEST_FAILPOINTS: '1',
      KEEL_FAILPOINTS: 'submit.before_commit=kill',
    });
    assert.equal(outcome.served, false, 'keel serve ran with fault points armed');
    assert.equal(outcome.code, 1);
    assert.match(outcome.stderr, /KEEL_TEST_FAILPOINTS, KEEL_FAILPOINTS: test-only switches/);
  });

  it('the test entry serves with a known seeded bug and refuses an unknown one', async () => {
    const known = await serveOutcome(TEST_SERVE, { KEEL_TEST_SEEDED_BUGS: 'no_fencing' });
    assert.equal(known.served, true, known.stderr);
    const typo = await serveOutcome(TEST_SERVE, { KEEL_TEST_SEEDED_BUGS: 'no_fencin' });
    assert.equal(typo.served, false);
    assert.equal(typo.code, 1);
    assert.match(typo.stderr, /unknown seeded bug "no_fencin"/);
  });

  it('opening a store with an unknown seeded bug fails with CONFIG_INVALID', async () => {
    await assert.rejects(
      openSqliteStore({
        path: join(tempDir(), 'keel.db'),
        durability: 'process',
        seededBugs: ['entries_at_the_end'],
      }),
      (error) => isKeelError(error, 'CONFIG_INVALID'),
    );
  });
});
