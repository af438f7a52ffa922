// `keel demo` as a user runs it (`npm run demo` = node bin/keel.js demo): exits 0
// within its time budget, narrates every step, and leaves no temp dir behind.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { KEEL_CLI } from './helpers/keel-cli.ts';

const ROOT = new URL('..', import.meta.url).pathname;

// The demo's own TMPDIR: another test running the demo at the same time (the README walk)
// makes and removes its keel-demo-* dirs in the shared one.
const temp = mkdtempSync(join(tmpdir(), 'keel-demo-run-'));
after(() => rmSync(temp, { recursive: true, force: true }));

// Its wall time is not asserted (speed belongs in benchmarks); the timeout only bounds a hang.
it('keel demo runs the whole tour and exits 0', { timeout: 240_000 }, async () => {
  const env: NodeJS.ProcessEnv = { TMPDIR: temp };
  for (const [key, value] of Object.entries(process.env))
    if (!key.startsWith('KEEL_') && key !== 'TMPDIR') env[key] = value;
  const started = Date.now();
  const child = spawn(process.execPath, [...KEEL_CLI, 'demo'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const seconds = (Date.now() - started) / 1000;
  assert.equal(code, 0, out);
  console.log(`demo: ${seconds} s`);
  for (const expected of [
    'streamed live',
    'calc_eval: {"expression":"6*7","value":42}',
    'deduplicated: true',
    'ack delivered → status delivered',
    'SIGKILL sent to keel serve',
    'run succeeded, attempt 2',
    'Where to look next',
  ]) {
    assert.ok(out.includes(expected), `demo output lacks ${JSON.stringify(expected)}\n${out}`);
  }
  assert.equal((out.match(/✓ proves:/g) ?? []).length, 6);
  assert.deepEqual(
    readdirSync(temp).filter((name) => name.startsWith('keel-demo-')),
    [],
    'the temp dir was removed',
  );
  console.log(`# demo took ${seconds.toFixed(1)} s`);
});
