// `keel chat` in a real pseudo-terminal (tmux) against a keel on loopback: Ctrl-C while
// an answer is running cancels that run (the server says cancelled) and a second Ctrl-C
// leaves with 130; /help, /new (a new scope, seen by the server), /cancel; two Ctrl-Cs at
// the prompt leave without "readline was closed"; piped input (end of input mid-answer)
// still gets every answer and exits 0.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import type { TestKeel } from './helpers/keel-server.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import { NO_TMUX, TmuxSession } from './helpers/tmux.ts';
import { waitFor } from './helpers/wait-for.ts';
import { KEEL_CLI } from './helpers/keel-cli.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const CHAT = [process.execPath, ...KEEL_CLI, 'chat', 'assistant'];
let keel: TestKeel;

async function api(method: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${keel.url}/v1${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return response.json();
}

async function runsOn(scope: string): Promise<{ run_id: string; status: string }[]> {
  const page = (await api('GET', `/tenants/chat/runs?scope=${encodeURIComponent(scope)}`)) as {
    runs: { run_id: string; status: string }[];
  };
  return page.runs;
}

before(async () => {
  keel = await startTestKeel();
  await api('POST', '/tenants', { name: 'chat' });
  const put = await fetch(`${keel.url}/v1/tenants/chat/agents/assistant`, {
    method: 'PUT',
    headers: { 'content-type': 'application/toml' },
    body: 'model = "fixture/echo"\nmax_steps = 6\n',
  });
  assert.equal(put.status, 201, await put.text());
});

after(async () => {
  await keel.close();
});

function chatIn(scope: string): TmuxSession {
  return new TmuxSession([...CHAT, scope], {
    cwd: ROOT,
    env: { KEEL_URL: keel.url, KEEL_TENANT: 'chat' },
    // The exit code stays on screen after keel leaves.
    afterExit: 'echo "EXIT=$?"; sleep 60',
  });
}

describe('keel chat (tmux)', { skip: NO_TMUX }, () => {
  it('Ctrl-C cancels the running answer, /help, /new, /cancel, then Ctrl-C twice leaves', async () => {
    const chat = chatIn('tty-a');
    try {
      await chat.shows(/you> $/m);
      chat.send('/help', 'Enter');
      await chat.shows(/\/new {6}start a new conversation/);

      chat.send('@sleep 60000', 'Enter');
      await waitFor(
        'a running run on tty-a',
        async () => (await runsOn('tty-a'))[0]?.status === 'running',
        { timeoutMs: 20_000 },
      );
      chat.send('C-c');
      let screen = await chat.shows(/\(run \S+ cancelled\)\n/);
      assert.match(screen, /\^C cancelling run \S+…/);
      assert.match(screen, /✗ cancelled: Ctrl-C in keel chat/);
      const [first] = await runsOn('tty-a');
      assert.equal(first?.status, 'cancelled');
      console.log(`# Ctrl-C: run ${first?.run_id} ${first?.status}`);

      chat.send('/new', 'Enter');
      screen = await chat.shows(/new conversation on scope "tty-a~[0-9a-f]{6}"/);
      const newScope = /scope "(tty-a~[0-9a-f]{6})"/.exec(screen)?.[1] ?? '';
      chat.send('hello again', 'Enter');
      await chat.shows(/assistant> echo: hello again\n/);
      // The answer shows as the model call ends (its whole text comes as one delta before
      // the call's response), a moment before the run is finalized.
      await waitFor(
        `a succeeded run on ${newScope}`,
        async () => (await runsOn(newScope))[0]?.status === 'succeeded',
        { timeoutMs: 10_000 },
      );
      assert.equal((await runsOn('tty-a')).length, 1, 'the old scope got no new run');

      chat.send('@sleep 60000', 'Enter');
      await waitFor(
        'a running run on the new scope',
        async () => (await runsOn(newScope))[0]?.status === 'running',
        { timeoutMs: 20_000 },
      );
      chat.send('/cancel', 'Enter');
      await chat.shows(/✗ cancelled: \/cancel in keel chat/);
      assert.equal((await runsOn(newScope))[0]?.status, 'cancelled');

      chat.send('/cancel', 'Enter');
      await chat.shows(/nothing is running/);
      chat.send('half a line', 'C-c');
      await chat.shows(/\(Ctrl-C again, \/quit or Ctrl-D to leave/);
      chat.send('C-c');
      screen = await chat.shows(/EXIT=\d+/);
      assert.match(screen, /EXIT=130/);
      assert.doesNotMatch(screen, /readline was closed|ERR_USE_AFTER_CLOSE|at .*\.ts:\d+/);
    } finally {
      chat.close();
    }
  });

  it('a second Ctrl-C while the cancel is under way leaves at once', async () => {
    const chat = chatIn('tty-b');
    try {
      await chat.shows(/you> $/m);
      chat.send('@sleep 60000', 'Enter');
      await waitFor(
        'a running run on tty-b',
        async () => (await runsOn('tty-b'))[0]?.status === 'running',
        { timeoutMs: 20_000 },
      );
      chat.send('C-c');
      chat.send('C-c');
      const screen = await chat.shows(/EXIT=\d+/);
      assert.match(screen, /EXIT=130/);
      assert.match(screen, /\(leaving\)/);
      assert.doesNotMatch(screen, /readline was closed|ERR_USE_AFTER_CLOSE/);
      // The first Ctrl-C's cancel reached the server.
      await waitFor(
        'a cancelled run on tty-b',
        async () => (await runsOn('tty-b'))[0]?.status === 'cancelled',
        { timeoutMs: 10_000 },
      );
    } finally {
      chat.close();
    }
  });
});

describe('keel chat with piped input', () => {
  it('answers every line even though input ends while the first answer runs', async () => {
    // Each turn is submitted with follow (it is watched from its first model call).
    let followed = 0;
    const expect = keel.live.expect.bind(keel.live);
    keel.live.expect = (runId, ms) => {
      followed += 1;
      expect(runId, ms);
    };
    const child = spawn(process.execPath, CHAT.slice(1).concat('piped'), {
      cwd: ROOT,
      env: { ...process.env, KEEL_URL: keel.url, KEEL_TENANT: 'chat' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.stdin.end('@sleep 300\nfirst\nsecond\n/help\n');
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    keel.live.expect = expect;
    assert.equal(code, 0, stderr);
    assert.match(stdout, /assistant> echo: first\n[\s\S]*assistant> echo: second\n/);
    assert.match(stdout, /commands:/);
    assert.doesNotMatch(stderr, /readline was closed/);
    assert.equal(followed, 3, 'each of the three turns announced its follower');
  });
});
