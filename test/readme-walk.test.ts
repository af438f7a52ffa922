// The README's Quick start, walked as a new user would: a fresh copy of the repository
// (git ls-files) in a temp dir with node_modules linked in place of `npm install`, the
// build `npm install` runs (`prepare`; fresh-copy.ts), then every command of the
// README's sh blocks —
// the demo, `npm start` (on a free port through KEEL_LISTEN), the CLI commands, the curl
// calls — with its output checked. Every command in those blocks must be run here or
// skipped here with a reason, and every command here must still be in the README, so
// the README cannot drift from what works.
//
// `npx keel …` lines run `node bin/keel.js …`, the file npx resolves `keel` to: npx
// first installs the project itself into its cache (~/.npm/_npx), which a copy with a
// linked node_modules does not support. npm's own output is still checked for warnings
// (e.g. an unknown .npmrc key) on `npm run demo` and `npm start` (and `npm run build`
// when the checkout's dist/ is not of these sources and the copy builds its own). The
// demo runs beside the other steps (it has its own temp dir and ports).

import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { freePort } from '../src/cli/demo-processes.ts';
import { copyCheckout, copyCurrentBuild } from './helpers/fresh-copy.ts';
import { waitFor } from './helpers/wait-for.ts';

const ROOT = new URL('..', import.meta.url).pathname;
let dir: string;
/** XDG_DATA_HOME and XDG_CONFIG_HOME of every command: keel never touches the real ~. */
let xdg: string;
let port: number;
let server: ChildProcess | null = null;
let serverOutput = '';

/** The README's sh blocks as logical commands (continuation lines joined). */
function readmeCommands(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const commands: string[] = [];
  for (const block of readme.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const joined = (block[1] ?? '').replace(/\\\n\s*/g, '');
    for (const line of joined.split('\n')) if (line.trim()) commands.push(line.trim());
  }
  return commands;
}

function env(): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.startsWith('KEEL_') && !key.startsWith('npm_')) clean[key] = value;
  return {
    ...clean,
    KEEL_LISTEN: `127.0.0.1:${port}`,
    KEEL_URL: `http://127.0.0.1:${port}`,
    KEEL_TEST_SKIP_ONNX: '1',
    XDG_DATA_HOME: join(xdg, 'data'),
    XDG_CONFIG_HOME: join(xdg, 'config'),
  };
}

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a README line in bash in the copy, with the README's port swapped for ours. */
function sh(command: string, input = ''): Promise<Result> {
  const line = command.replaceAll('localhost:8080', `127.0.0.1:${port}`);
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', line], { cwd: dir, env: env() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.stdin.end(input);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const viaBin = (command: string): string => command.replace(/^npx keel /, 'node bin/keel.js ');

function ok(result: Result, command: string): Result {
  assert.equal(result.code, 0, `${command}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return result;
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'keel-readme-'));
  xdg = mkdtempSync(join(tmpdir(), 'keel-readme-xdg-'));
  copyCheckout(dir);
});

after(async () => {
  if (server?.pid) process.kill(-server.pid, 'SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 500));
  rmSync(dir, { recursive: true, force: true });
  rmSync(xdg, { recursive: true, force: true });
});

it('walks the README Quick start in a fresh copy', { timeout: 240_000 }, async () => {
  port = await freePort();
  const started = Date.now();
  const seen: string[] = [];
  let runId = '';
  let demo: Promise<void> = Promise.resolve();
  // Every command of the README, what stands in for it here, and what it must print.
  const steps: Record<string, (command: string) => Promise<void>> = {
    'npm install && npm run demo': async () => {
      // node_modules is linked in; `npm install` would then run `prepare`, the build. The
      // checkout's own install already ran it on these very sources (a fresh clone's
      // `npm ci` in CI): its dist/ is copied (20 s of tsc less); built here otherwise.
      if (!copyCurrentBuild(dir)) {
        const build = ok(await sh('npm run build'), 'npm run build');
        assert.doesNotMatch(build.stderr, /npm warn/i);
      }
      assert.ok(existsSync(join(dir, 'dist/.build-stamp')), 'the build wrote dist/');
      demo = sh('npm run demo').then((result) => {
        ok(result, 'npm run demo');
        assert.match(result.stdout, /What this showed/);
        assert.doesNotMatch(result.stderr, /npm warn/i);
      });
      demo.catch(() => undefined); // awaited at the end; not unhandled meanwhile
    },
    'npm start': async (command) => {
      server = spawn('bash', ['-c', command], { cwd: dir, env: env(), detached: true });
      server.stdout?.on('data', (chunk: Buffer) => (serverOutput += chunk.toString('utf8')));
      server.stderr?.on('data', (chunk: Buffer) => (serverOutput += chunk.toString('utf8')));
      await waitFor('npm start to listen', () => /keel listening on/.test(serverOutput), {
        timeoutMs: 60_000,
      });
      assert.doesNotMatch(serverOutput, /npm warn|dist\/ is older/i);
      // The README says where the data goes: the XDG data dir, not the checkout.
      const dataDir = join(xdg, 'data', 'keel');
      await waitFor('npm start to say where its data is', () =>
        serverOutput.includes(`config none; data dir ${dataDir} (default`),
      );
      await waitFor('the database under the XDG data dir', () =>
        existsSync(join(dataDir, 'keel.db')),
      );
      assert.ok(!existsSync(join(dir, '.keel')), 'nothing written in the checkout');
    },
    'npx keel tenant create default': async (command) => {
      const result = ok(await sh(viaBin(command)), command);
      assert.match(result.stdout, /tenant default ready/);
    },
    'printf \'model = "fixture/echo"\\n\' > agent.toml && npx keel agent put assistant agent.toml':
      async (command) => {
        const result = ok(await sh(command.replace('&& npx keel', '&& node bin/keel.js')), command);
        assert.match(result.stdout, /agent assistant \(fixture\/echo\) saved/);
      },
    "npx keel turn assistant s1 $'what time is it?\\n@call clock_now {}' --stream": async (
      command,
    ) => {
      const result = ok(await sh(viaBin(command)), command);
      assert.match(result.stdout, /→ clock_now/);
      assert.match(result.stdout, /← clock_now: \{"utc":/);
      assert.match(result.stdout, /echo: what time is it\?\nclock_now: \{/);
    },
    'npx keel chat assistant          # interactive: Ctrl-C cancels an answer, /help': async (
      command,
    ) => {
      const result = ok(await sh(viaBin(command), 'hello chat\n/help\n/quit\n'), command);
      assert.match(result.stdout, /assistant> echo: hello chat/);
      assert.match(result.stdout, /\/new {6}start a new conversation/);
    },
    'npx keel runs list': async (command) => {
      const result = ok(await sh(viaBin(command)), command);
      assert.match(result.stdout, /succeeded/);
      assert.equal(result.stdout.match(/succeeded/g)?.length, 2, result.stdout);
    },
    'npm test': async () => {
      // Skipped: it is the suite this test belongs to.
    },
    'curl -s -XPOST localhost:8080/v1/tenants -H \'content-type: application/json\' -d \'{"name":"demo"}\'':
      async (command) => {
        assert.match(ok(await sh(command), command).stdout, /"name":"demo"/);
      },
    "curl -s -XPUT localhost:8080/v1/tenants/demo/agents/assistant -H 'content-type: application/toml' --data-binary $'model = \"fixture/echo\"\\nmax_steps = 6\\n'":
      async (command) => {
        assert.match(ok(await sh(command), command).stdout, /"model":"fixture\/echo"/);
      },
    'curl -s -XPOST localhost:8080/v1/tenants/demo/turns -H \'content-type: application/json\' -d \'{"agent":"assistant","scope":"tg:42","payload":{"text":"hello"},"request_id":"m-1"}\'':
      async (command) => {
        const body = JSON.parse(ok(await sh(command), command).stdout) as { run_id: string };
        runId = body.run_id;
        assert.ok(runId);
      },
    'curl -s "localhost:8080/v1/tenants/demo/runs/<run_id>/wait?timeout_ms=5000"': async (
      command,
    ) => {
      const result = ok(await sh(command.replace('<run_id>', runId)), command);
      const body = JSON.parse(result.stdout) as { run: { status: string; output: unknown } };
      assert.equal(body.run.status, 'succeeded');
      assert.deepEqual(body.run.output, { reply: 'echo: hello' });
    },
  };
  const commands = readmeCommands();
  assert.deepEqual(
    commands.filter((command) => !(command in steps)),
    [],
    'README commands this walk does not know (add them here)',
  );
  assert.deepEqual(
    Object.keys(steps).filter((command) => !commands.includes(command)),
    [],
    'commands this walk runs that the README no longer has',
  );
  for (const command of commands) {
    const step = steps[command];
    const stepStarted = Date.now();
    if (step) await step(command);
    seen.push(command);
    console.log(`# ${((Date.now() - stepStarted) / 1000).toFixed(1)} s  ${command.slice(0, 60)}`);
  }
  await demo;
  console.log(
    `# README walk: ${seen.length} commands in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
});
