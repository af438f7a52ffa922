// The client commands as a user runs them (child processes against a keel on loopback):
// tenant/agent/token setup, turn --wait / --stream, runs list/show/trace/cancel, API
// errors printed as CODE: message with a non-zero exit, and `keel chat` driven in a
// pseudo-terminal through tmux.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TestKeel } from './helpers/keel-server.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import { waitFor } from './helpers/wait-for.ts';
import { buildModules } from './helpers/wasm-modules.ts';
import { NO_TMUX, TmuxSession } from './helpers/tmux.ts';
import { KEEL_CLI } from './helpers/keel-cli.ts';

const ROOT = new URL('..', import.meta.url).pathname;
let keel: TestKeel;

function env(): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.startsWith('KEEL_')) clean[key] = value;
  return { ...clean, KEEL_URL: keel.url, KEEL_TENANT: 'cli' };
}

function keelCli(
  ...args: string[]
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...KEEL_CLI, ...args], {
      cwd: ROOT,
      env: env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

before(async () => {
  keel = await startTestKeel();
});

after(async () => {
  await keel.close();
});

describe('keel client commands', () => {
  it('sets up a tenant, an agent from a TOML file and a token', async () => {
    const tenant = await keelCli('tenant', 'create', 'cli');
    assert.equal(tenant.code, 0, tenant.stderr);
    assert.match(tenant.stdout, /tenant cli ready/);
    const file = join(keel.dir, 'agent.toml');
    await writeFile(file, 'model = "fixture/echo"\nmax_steps = 6\n');
    const agent = await keelCli('agent', 'put', 'assistant', file);
    assert.equal(agent.code, 0, agent.stderr);
    assert.match(agent.stdout, /agent assistant \(fixture\/echo\) saved/);
    const token = await keelCli('token', 'create', 'cli', 'laptop');
    assert.equal(token.code, 0, token.stderr);
    assert.match(token.stdout.trim(), /^\S{20,}$/);
  });

  it('turn --wait prints the output; turn --stream shows tool calls and the answer', async () => {
    const waited = await keelCli(
      'turn',
      'assistant',
      's1',
      'hello there',
      '--wait',
      '--request-id',
      'cli-1',
    );
    assert.equal(waited.code, 0, waited.stderr);
    assert.equal(waited.stdout, 'echo: hello there\n');
    // --stream submits with follow: the run counts as watched before the stream opens.
    const followed: string[] = [];
    const expect = keel.live.expect.bind(keel.live);
    keel.live.expect = (runId, ms) => {
      followed.push(runId);
      expect(runId, ms);
    };
    const streamed = await keelCli(
      'turn',
      'assistant',
      's2',
      '@call calc_eval {"expression":"2*21"}\n@stream 3',
      '--stream',
    );
    keel.live.expect = expect;
    assert.equal(streamed.code, 0, streamed.stderr);
    assert.match(streamed.stdout, /^run \S+\n/);
    assert.deepEqual(followed, [/^run (\S+)\n/.exec(streamed.stdout)?.[1]]);
    assert.match(streamed.stdout, /→ calc_eval/);
    assert.match(streamed.stdout, /← calc_eval: \{"expression":"2\*21","value":42\}/);
    assert.match(streamed.stdout, /calc_eval: \{"expression":"2\*21","value":42\}\n$/);
  });

  it('runs list / show / trace / cancel', async () => {
    const submitted = await keelCli('turn', 'assistant', 's3', '@sleep 60000\nslow');
    assert.equal(submitted.code, 0, submitted.stderr);
    const [runId] = submitted.stdout.split(' ');
    assert.ok(runId);
    const list = await keelCli('runs', 'list', '--scope', 's3');
    assert.match(list.stdout, new RegExp(`^${runId}  running`, 'm'));
    assert.match(list.stdout, /^RUN +STATUS +AGENT +SCOPE +CREATED$/m);
    const cancel = await keelCli('runs', 'cancel', runId, '--reason', 'test');
    assert.equal(cancel.stdout, `${runId} cancelled\n`);
    const show = await keelCli('runs', 'show', runId);
    assert.equal(JSON.parse(show.stdout).status, 'cancelled');
    const trace = await keelCli('runs', 'trace', runId);
    assert.match(trace.stdout, /^1\t\S+\trun\.queued\t/);
    assert.match(trace.stdout, /run\.cancelled/);
  });

  it('turn --on-busy steer / interrupt, runs fork', async () => {
    const submitted = await keelCli('turn', 'assistant', 's4', '@sleep 60000\nslow');
    const [runId] = submitted.stdout.split(' ');
    await waitFor('the run is running', async () => {
      const response = await fetch(`${keel.url}/v1/tenants/cli/runs/${runId}`);
      return ((await response.json()) as { run: { status: string } }).run.status === 'running';
    });
    const steered = await keelCli(
      'turn',
      'assistant',
      's4',
      '@reply Tuesday',
      '--on-busy',
      'steer',
    );
    assert.equal(steered.code, 0, steered.stderr);
    assert.match(steered.stdout, new RegExp(`^${runId} running \\(steered into it as \\S+\\)\n$`));
    // Interrupt: the sleeping run is cancelled; the steered turn it never took runs next,
    // then this one.
    const interrupted = await keelCli(
      'turn',
      'assistant',
      's4',
      'instead',
      '--on-busy',
      'interrupt',
      '--wait',
    );
    assert.equal(interrupted.code, 0, interrupted.stderr);
    assert.equal(interrupted.stdout, 'echo: instead\n');
    const show = await keelCli('runs', 'show', runId as string);
    assert.equal(JSON.parse(show.stdout).status, 'cancelled');
    const list = await keelCli('runs', 'list', '--scope', 's4', '--status', 'succeeded', '--json');
    const succeeded = (JSON.parse(list.stdout) as { runs: { run_id: string }[] }).runs;
    assert.equal(succeeded.length, 2, 'the steered turn and the interrupting one');
    const source = succeeded[0]?.run_id as string;
    const forked = await keelCli(
      'runs',
      'fork',
      source,
      '--at-step',
      '0',
      '--text',
      'other',
      '--scope',
      's5',
    );
    assert.equal(forked.code, 0, forked.stderr);
    assert.match(forked.stdout, /^\S+ queued "s5"\n$/);
    const bad = await keelCli('runs', 'fork', source);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /--at-step/);
    const badBusy = await keelCli('turn', 'assistant', 's4', 'x', '--on-busy', 'barge');
    assert.notEqual(badBusy.code, 0);
    assert.match(badBusy.stderr, /--on-busy/);
  });

  it('API errors print the code and message and exit non-zero', async () => {
    const missing = await keelCli('turn', 'nobody', 's', 'hi', '--wait');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^keel: AGENT_NOT_FOUND: /);
    const unknownRun = await keelCli('runs', 'show', '0190a000-0000-7000-8000-00000000abcd');
    assert.equal(unknownRun.code, 1);
    assert.match(
      unknownRun.stderr,
      /keel: RUN_NOT_FOUND: run 0190a000-0000-7000-8000-00000000abcd not found/,
    );
    const unreachable = await keelCli('runs', 'list', '--url', 'http://127.0.0.1:1');
    assert.equal(unreachable.code, 1);
    assert.match(
      unreachable.stderr,
      /keel: UNREACHABLE: cannot reach keel at http:\/\/127\.0\.0\.1:1/,
    );
    const usage = await keelCli('turn', 'assistant');
    assert.equal(usage.code, 2);
  });

  it('wasm put / list / rm a WebAssembly tool; a bad effect is refused by name', async () => {
    const module = join(keel.dir, 'trivial.wasm');
    await writeFile(module, (await buildModules()).trivial);
    const put = await keelCli(
      'wasm',
      'put',
      'ok_tool',
      '--module',
      module,
      '--effect',
      'read_only',
      '--description',
      'answers ok',
      '--timeout-ms',
      '2000',
    );
    assert.equal(put.code, 0, put.stderr);
    assert.match(put.stdout, /^wasm tool wasm_ok_tool saved \(\d+ bytes, sha256 [0-9a-f]{64}\)/);
    const badEffect = await keelCli(
      'wasm',
      'put',
      'other',
      '--module',
      module,
      '--effect',
      'sometimes',
      '--description',
      'x',
    );
    assert.equal(badEffect.code, 1);
    assert.match(badEffect.stderr, /^keel: VALIDATION_FAILED: .*effect/);
    const listed = await keelCli('wasm', 'list');
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(
      listed.stdout,
      /^wasm_ok_tool\tread_only\t\d+ bytes\t2000 ms\t\d+ MiB\tanswers ok\n$/,
    );
    const removed = await keelCli('wasm', 'rm', 'ok_tool');
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, /wasm tool ok_tool removed/);
    const empty = await keelCli('wasm', 'list');
    assert.equal(empty.stdout, '');
  });
});

describe('keel chat in a pseudo-terminal (tmux)', { skip: NO_TMUX }, () => {
  it('types lines and sees streamed answers and tool calls', async () => {
    const chat = new TmuxSession([process.execPath, ...KEEL_CLI, 'chat', 'assistant', 'tty'], {
      cwd: ROOT,
      env: { KEEL_URL: keel.url, KEEL_TENANT: 'cli' },
    });
    try {
      await chat.shows(/you> $/m);
      chat.send('hello from the terminal', 'Enter');
      await chat.shows(/assistant> echo: hello from the terminal\n/);
      chat.send('@call calc_eval {"expression":"1+2"}', 'Enter');
      const screen = await chat.shows(
        /← calc_eval: \{"expression":"1\+2","value":3\}[\s\S]*assistant> echo: \s*\n?calc_eval:/,
      );
      assert.match(screen, /→ calc_eval/);
      chat.send('/quit', 'Enter');
      assert.ok(await chat.ended(), 'keel chat did not exit on /quit');
    } finally {
      chat.close();
    }
  });
});
