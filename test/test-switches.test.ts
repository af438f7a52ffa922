// Test-only switches can never act in a production process: the real `keel serve`
// refuses the seeded-bug and fault-point env vars (it used to run with fencing off under
// KEEL_TEST_SEEDED_BUGS=no_fencing), the test entry refuses an unknown seeded bug name,
// and no module under src/ names a seeded bug at all (they are test-side decorators).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { KEEL_TEST_SERVE } from './helpers/keel-test-serve-entry.ts';
import { SEEDED_BUGS } from './helpers/seeded-bugs.ts';
import { KEEL_CLI } from './helpers/keel-cli.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|mjs|js)$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

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
  entry: readonly string[],
  env: Record<string, string>,
  whileServing: (url: string) => Promise<void> = async () => {},
): Promise<{ served: boolean; code: number | null; stderr: string; failure?: unknown }> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('KEEL_')),
  );
  const args = [...entry, '--listen', '127.0.0.1:0', '--data-dir', tempDir()];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...clean, KEEL_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let served = false;
  let failure: unknown;
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    const ready = /^keel listening on (\S+)/m.exec(stdout);
    if (!served && ready?.[1]) {
      served = true;
      whileServing(ready[1])
        .catch((error: unknown) => (failure = error))
        .finally(() => child.kill('SIGKILL'));
    }
  });
  return new Promise((resolve) =>
    child.once('exit', (code) => resolve({ served, code: served ? null : code, stderr, failure })),
  );
}

const KEEL_SERVE = [...KEEL_CLI, 'serve'];

/** The tool names a tokenless keel started from `entry` lists for a fresh tenant. */
async function toolNamesServed(
  entry: readonly string[],
  env: Record<string, string>,
): Promise<string[]> {
  let names: string[] = [];
  const outcome = await serveOutcome(entry, env, async (url) => {
    const created = await fetch(`${url}/v1/tenants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'switches' }),
    });
    assert.equal(created.status, 201, await created.text());
    const listed = await fetch(`${url}/v1/tenants/switches/tools`);
    assert.equal(listed.status, 200);
    const body = (await listed.json()) as { tools: { name: string }[] };
    names = body.tools.map((tool) => tool.name);
  });
  assert.equal(outcome.served, true, outcome.stderr);
  if (outcome.failure) throw outcome.failure;
  return names;
}
const TEST_SERVE = KEEL_TEST_SERVE;

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

  it('a real keel serve with KEEL_TEST_EFFECT_SINK_URL refuses to start (no test tools in production)', async () => {
    const outcome = await serveOutcome(KEEL_SERVE, {
      KEEL_TEST_EFFECT_SINK_URL: 'http://127.0.0.1:9/',
    });
    console.log(`keel serve + effect sink: served=${outcome.served} exit=${outcome.code}`);
    assert.equal(outcome.served, false, 'keel serve ran with the test sink tools');
    assert.equal(outcome.code, 1);
    assert.match(outcome.stderr, /KEEL_TEST_EFFECT_SINK_URL: test-only switches, refused/);
  });

  it('a real keel serve with KEEL_TEST_FAILPOINTS_STDIN refuses to start (no re-arming in production)', async () => {
    const outcome = await serveOutcome(KEEL_SERVE, { KEEL_TEST_FAILPOINTS_STDIN: '1' });
    assert.equal(outcome.served, false, 'keel serve ran with a fault-point switch');
    assert.equal(outcome.code, 1);
    assert.match(outcome.stderr, /KEEL_TEST_FAILPOINTS_STDIN: test-only switches, refused/);
  });

  it('the test entry injects the sink tools: sink_write is listed by GET /v1/tools', async () => {
    const names = await toolNamesServed(TEST_SERVE, {
      KEEL_TEST_EFFECT_SINK_URL: 'http://127.0.0.1:9/',
    });
    assert.ok(names.includes('sink_write') && names.includes('sink_put'), names.join(','));
    const plain = await toolNamesServed(TEST_SERVE, {});
    assert.equal(plain.includes('sink_write'), false, 'sink tools without the test variable');
  });

  it('the test entry serves with a known seeded bug and refuses an unknown one', async () => {
    const known = await serveOutcome(TEST_SERVE, { KEEL_TEST_SEEDED_BUGS: 'no_fencing' });
    assert.equal(known.served, true, known.stderr);
    const typo = await serveOutcome(TEST_SERVE, { KEEL_TEST_SEEDED_BUGS: 'no_fencin' });
    assert.equal(typo.served, false);
    assert.equal(typo.code, 1);
    assert.match(typo.stderr, /unknown seeded bug "no_fencin"/);
  });

  it('no production module names a seeded bug or takes a seeded-bug parameter', () => {
    // The bugs are test-side decorators (test/helpers/seeded-bugs.ts): keel's code under
    // src/ cannot be told to run one, so no config, flag or variable can reach one.
    const named: string[] = [];
    for (const file of sourceFiles(join(ROOT, 'src'))) {
      const text = readFileSync(file, 'utf8');
      for (const word of [...SEEDED_BUGS, 'seededBugs', 'hasBug'])
        if (text.includes(word)) named.push(`${relative(ROOT, file)}: ${word}`);
    }
    assert.deepEqual(named, []);
  });
});
