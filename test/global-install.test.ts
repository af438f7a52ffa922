// keel as a user installs it (issue 33): `npm pack` of a fresh copy of the repository
// (git ls-files), `npm install -g --prefix <tmp>` of the tarball,
// then `<prefix>/bin/keel serve` started from unrelated directories with HOME pointing
// into a temp dir. It must run the compiled dist/ (not fall back to tsx), keep its
// database under ~/.local/share/keel and nothing in the working directory, say so on
// stderr, and find the same data when started again from elsewhere, or an earlier keel's
// ./.keel/keel.db when started where that is; with KEEL_HOME (as
// deploy/keel.service sets it) everything is under KEEL_HOME, and --pretty says the
// same in a readable line.
//
// Bounded and offline-tolerant: the install uses --prefer-offline (npm's cache from the
// checkout's own install) and --ignore-scripts. The one install script keel needs is
// better-sqlite3's, which downloads or compiles its native addon (minutes on this
// machine, and github.com is not reachable here); the test puts the checkout's addon —
// the same version, built for this Node — where that script would have. The checkout's
// dist/ is packed when its build stamp records exactly the copy's sources (fresh-copy.ts);
// otherwise `npm pack` builds it. No other file is taken from the checkout.

import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { execFileSync, spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  utimesSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, it } from 'node:test';
import { copyCheckout, copyCurrentBuild } from './helpers/fresh-copy.ts';
import { waitFor } from './helpers/wait-for.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'keel-global-'));
const prefix = join(work, 'prefix');
const home = join(work, 'home');
const children: ChildProcess[] = [];

/** The test runner's environment without keel's or npm's own variables, HOME in temp. */
function cleanEnv(more: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('KEEL_') || key.startsWith('npm_') || key.startsWith('XDG_')) continue;
    env[key] = value;
  }
  return { ...env, HOME: home, ...more };
}

/** npm itself keeps the real HOME: its cache there is what makes the install quick. */
function npm(args: string[], cwd: string): string {
  return execFileSync('npm', args, {
    cwd,
    encoding: 'utf8',
    env: { ...cleanEnv(), HOME: process.env.HOME ?? home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

interface Served {
  url: string;
  output: () => string;
  stop: () => Promise<number | null>;
}

async function serve(
  cwd: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<Served> {
  mkdirSync(cwd, { recursive: true });
  const child = spawn(join(prefix, 'bin/keel'), ['serve', '--port', '0', ...args], {
    cwd,
    env: cleanEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const url = await waitFor(
    `keel serve to listen\n${output}`,
    () => /keel listening on (\S+)/.exec(output)?.[1] ?? (child.exitCode === null ? '' : 'exited'),
    { timeoutMs: 30_000 },
  );
  assert.notEqual(url, 'exited', output);
  return {
    url,
    output: () => output,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

let copySeconds = 0;
before(() => {
  const copyStarted = Date.now();
  // A fresh copy as `git clone` would give, so the tarball holds only tracked files.
  copyCheckout(join(work, 'repo'));
  mkdirSync(home);
  copySeconds = (Date.now() - copyStarted) / 1000;
});

after(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

it('npm pack → npm install -g → keel serve from any directory', { timeout: 180_000 }, async () => {
  const started = Date.now();
  console.log(`# copy of the repository ${copySeconds.toFixed(1)} s`);
  // The checkout's dist/ is packed when it was built from exactly these sources (the
  // build `prepare` runs, which a fresh clone's `npm ci` ran); else `npm pack` builds.
  const repo = join(work, 'repo');
  const reuse = copyCurrentBuild(repo);
  const packed = JSON.parse(
    npm(
      ['pack', '--json', '--pack-destination', work, ...(reuse ? ['--ignore-scripts'] : [])],
      repo,
    ),
  ) as { filename: string; files: { path: string }[] }[];
  const tarball = join(work, packed[0]?.filename ?? '');
  const paths = new Set(packed[0]?.files.map((file) => file.path));
  for (const needed of [
    'bin/keel.js',
    'dist/.build-stamp',
    'dist/cli/main.js',
    'src/cli/main.ts',
    'deploy/keel.service',
  ])
    assert.ok(paths.has(needed), `the tarball lacks ${needed}`);
  assert.ok(![...paths].some((path) => path.startsWith('test/')), 'tests are not shipped');
  const packSeconds = (Date.now() - started) / 1000;

  npm(
    [
      'install',
      '-g',
      '--prefix',
      prefix,
      '--prefer-offline',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      tarball,
    ],
    work,
  );
  const installed = join(prefix, 'lib/node_modules/keel');
  const addon = 'node_modules/better-sqlite3/build/Release/better_sqlite3.node';
  mkdirSync(dirname(join(installed, addon)), { recursive: true });
  copyFileSync(join(ROOT, addon), join(installed, addon));
  const installSeconds = (Date.now() - started) / 1000 - packSeconds;
  // Unpacking gives files the time they were written, so src/ can look newer than the
  // build; made certain here, so the installed keel must tell by the digest.
  const later = new Date(Date.now() + 60_000);
  utimesSync(join(installed, 'src/cli/main.ts'), later, later);
  console.log(
    `# npm pack ${packSeconds.toFixed(1)} s (${reuse ? "the checkout's dist/" : 'built by prepare'}), npm install -g ${installSeconds.toFixed(1)} s`,
  );

  // Started from one directory: the database goes under ~/.local/share/keel.
  const first = join(work, 'somewhere');
  const served = await serve(first, []);
  const dataDir = join(home, '.local/share/keel');
  assert.doesNotMatch(served.output(), /running from source/, 'an installed keel runs dist/');
  // Log lines are written through a buffer, at most 200 ms after the banner.
  await waitFor('the line naming the files', () =>
    served.output().includes(`config none; data dir ${dataDir} (default`),
  );
  const health = await fetch(`${served.url}/healthz`);
  assert.equal(health.status, 200);
  const created = await fetch(`${served.url}/v1/tenants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'kept' }),
  });
  assert.equal(created.status, 201, await created.text());
  assert.equal(await served.stop(), 0, served.output());
  assert.ok(existsSync(join(dataDir, 'keel.db')), 'the database is under the XDG data dir');
  assert.deepEqual(readdirSync(first), [], 'nothing written in the working directory');

  // Started again from another directory: the same data.
  const again = await serve(join(work, 'elsewhere'), []);
  const tenants = (await (await fetch(`${again.url}/v1/tenants`)).json()) as {
    tenants: { name: string }[];
  };
  assert.deepEqual(
    tenants.tenants.map((tenant) => tenant.name),
    ['kept'],
  );
  assert.equal(await again.stop(), 0, again.output());

  // A directory where an earlier keel kept ./.keel/keel.db: that database is used (and
  // said so), not an empty one in the XDG data dir.
  const oldCwd = join(work, 'old-checkout');
  mkdirSync(join(oldCwd, '.keel'), { recursive: true });
  copyFileSync(join(dataDir, 'keel.db'), join(oldCwd, '.keel/keel.db'));
  const legacy = await serve(oldCwd, []);
  await waitFor('the warning about ./.keel', () =>
    legacy.output().includes('keeping the data dir ./.keel of an earlier keel'),
  );
  assert.ok(
    legacy.output().includes(`data dir ${join(oldCwd, '.keel')} (./.keel holds a keel.db)`),
    legacy.output(),
  );
  const legacyTenants = (await (await fetch(`${legacy.url}/v1/tenants`)).json()) as {
    tenants: { name: string }[];
  };
  assert.deepEqual(
    legacyTenants.tenants.map((tenant) => tenant.name),
    ['kept'],
  );
  assert.equal(await legacy.stop(), 0, legacy.output());

  // As the systemd unit runs it: KEEL_HOME holds keel.toml and data/; --pretty reads well.
  const keelHome = join(work, 'keel-home');
  mkdirSync(keelHome);
  const unitLike = await serve(work, ['--pretty'], { KEEL_HOME: keelHome });
  await waitFor('the pretty line naming the files', () =>
    / INFO.*config none/.test(unitLike.output()),
  );
  assert.match(
    unitLike.output(),
    new RegExp(
      `INFO.*config none; data dir ${keelHome}/data \\(KEEL_HOME\\); store sqlite:${keelHome}/data/keel\\.db`,
    ),
  );
  assert.equal(await unitLike.stop(), 0, unitLike.output());
  assert.ok(existsSync(join(keelHome, 'data/keel.db')));

  console.log(
    `# npm pack ${packSeconds.toFixed(1)} s, npm install -g ${installSeconds.toFixed(1)} s, whole test ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
});
