// The CLI tells a user what a run waits for (docs/approvals.md): `keel turn --stream`,
// `keel turn --wait` and `keel chat` print the call that waits for approval with the
// commands that decide it, instead of looking hung; a decision from a second `keel`
// process lets the first one finish; `keel approvals list` shows the run's input. Child
// processes against a keel on loopback; keel chat in a real pseudo-terminal (tmux).

import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { decideCommands } from '../src/cli/approval-notice.ts';
import { loadClientConfig } from '../src/cli/client-config.ts';
import type { TestKeel } from './helpers/keel-server.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import { NO_TMUX, TmuxSession } from './helpers/tmux.ts';
import { requestJson } from './helpers/json-request.ts';
import { waitFor } from './helpers/wait-for.ts';
import { KEEL_CLI } from './helpers/keel-cli.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const T = '/v1/tenants/ask';
const CALC = '@call calc_eval {"expression":"6*7"}';
let keel: TestKeel;

// Loose JSON for assertions.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

async function http(method: string, path: string, body?: unknown): Promise<Loose> {
  return (await requestJson(keel.url, method, path, body)).body;
}

/** The environment without KEEL_*, then `keel` (this keel and tenant `ask` unless told). */
function env(
  keelEnv: NodeJS.ProcessEnv = { KEEL_URL: keel.url, KEEL_TENANT: 'ask' },
): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.startsWith('KEEL_')) clean[key] = value;
  return { ...clean, ...keelEnv };
}

type Cli = {
  child: ChildProcess;
  out: () => string;
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
};

/** A `keel` child whose output is read as it comes; `done` resolves at 'close'. */
function startCli(...args: string[]): Cli {
  return startCliIn(env(), ...args);
}

function startCliIn(childEnv: NodeJS.ProcessEnv, ...args: string[]): Cli {
  const child = spawn(process.execPath, [...KEEL_CLI, ...args], {
    cwd: ROOT,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('close', (code) => resolve({ code, stdout, stderr })),
  );
  return { child, out: () => stdout, done };
}

/** Waits for the approval notice in a child's output; returns the commands it printed. */
async function noticeIn(out: () => string): Promise<{ approve: string[]; deny: string[] }> {
  const text = await waitFor(
    'the approval notice',
    () => (/deny: {4}.*\n/.test(out()) ? out() : ''),
    {
      timeoutMs: 20_000,
      everyMs: 50,
    },
  );
  const approve = /approve: keel (approvals approve \S+ \S+.*)\n/.exec(text)?.[1];
  const deny = /deny: {4}keel (approvals deny \S+ \S+.*) \[--note "why"\]\n/.exec(text)?.[1];
  assert.ok(approve && deny, text);
  return { approve: approve.split(' '), deny: deny.split(' ') };
}

before(async () => {
  keel = await startTestKeel();
  await http('POST', '/v1/tenants', { name: 'ask' });
  const agent = await http('PUT', `${T}/agents/careful`, {
    model: 'fixture/echo',
    require_approval: ['calc_*'],
  });
  assert.equal(agent.agent?.name, 'careful', JSON.stringify(agent));
});

after(async () => {
  await keel.close();
});

describe('the CLI says what a run waits for', () => {
  it('turn --stream prints the waiting call and the commands; approving from a second keel lets it finish', async () => {
    const first = startCli('turn', 'careful', 'stream', `${CALC}\nwhat is 6*7`, '--stream');
    const commands = await noticeIn(first.out);
    const waitingText = first.out();
    assert.match(waitingText, /^⏸ waiting for approval: calc_eval \{"expression":"6\*7"\}$/m);
    const runId = commands.approve[2];
    assert.equal(/^run (\S+)\n/.exec(waitingText)?.[1], runId, 'the notice names this run');
    // It waits for a person, not for a worker: the run is `waiting` and the CLI still runs.
    assert.equal((await http('GET', `${T}/runs/${runId}`)).run.status, 'waiting');
    assert.equal(first.child.exitCode, null, 'the first keel is still waiting');

    const approved = await startCli(...commands.approve).done;
    assert.equal(approved.code, 0, approved.stderr);
    assert.equal(approved.stdout, `${runId} ${commands.approve[3]} approved\n`);
    const finished = await first.done;
    console.log(`# --stream while waiting:\n${waitingText}# then:\n${finished.stdout}`);
    assert.equal(finished.code, 0, finished.stderr);
    assert.match(finished.stdout, /✓ approved: the run goes on\n/);
    assert.match(finished.stdout, /← calc_eval: \{"expression":"6\*7","value":42\}/);
    assert.match(finished.stdout, /calc_eval: \{"expression":"6\*7","value":42\}\n$/);
  });

  it('turn --wait says the run waits for approval; a denial with a note reaches the model', async () => {
    const first = startCli('turn', 'careful', 'wait', `${CALC}\nwhat is 6*7`, '--wait');
    const commands = await noticeIn(first.out);
    assert.match(first.out(), /^⏸ waiting for approval: calc_eval \{"expression":"6\*7"\}$/m);
    assert.equal(first.child.exitCode, null);
    const denied = await startCli(...commands.deny, '--note', 'not today').done;
    assert.equal(denied.code, 0, denied.stderr);
    const finished = await first.done;
    console.log(`# --wait:\n${finished.stdout}`);
    assert.equal(finished.code, 0, finished.stderr);
    assert.match(
      finished.stdout,
      /✗ denied: not today: the call does not run, the model is told\n/,
    );
    // The model's answer is printed last, as --wait always did: it got the denial.
    assert.match(finished.stdout, /APPROVAL_DENIED/);
    assert.match(finished.stdout, /not today/);
  });

  it('the commands repeat --tenant and --url given as flags (not the token): pasted into a shell with other KEEL_* they decide this run', async () => {
    // This keel reaches the server and tenant by flags only; its environment points elsewhere.
    const elsewhere = { KEEL_URL: 'http://127.0.0.1:9', KEEL_TENANT: 'default' };
    const first = startCliIn(
      env(elsewhere),
      'turn',
      'careful',
      'flags',
      `${CALC}\nwhat is 6*7`,
      '--wait',
      '--tenant',
      'ask',
      '--url',
      keel.url,
      '--token',
      'not-printed',
    );
    const commands = await noticeIn(first.out);
    const runId = commands.approve[2];
    assert.deepEqual(commands.approve.slice(4), ['--tenant', 'ask', '--url', keel.url]);
    assert.deepEqual(commands.deny.slice(4), ['--tenant', 'ask', '--url', keel.url]);
    assert.doesNotMatch(first.out(), /not-printed|--token/);
    // Another shell: the same KEEL_* that point elsewhere; the pasted command finds the run.
    const approved = await startCliIn(env(elsewhere), ...commands.approve).done;
    assert.equal(approved.code, 0, approved.stderr);
    assert.equal(approved.stdout, `${runId} ${commands.approve[3]} approved\n`);
    const finished = await first.done;
    assert.equal(finished.code, 0, finished.stderr);
    assert.match(finished.stdout, /calc_eval: \{"expression":"6\*7","value":42\}\n$/);
  });

  it('decideCommands repeats only what was given by flag, quoted for a shell', () => {
    const fromEnv = loadClientConfig({}, { KEEL_URL: 'http://h:9000', KEEL_TENANT: 'alice' });
    assert.deepEqual(decideCommands('r1', 'c1', fromEnv.given), {
      approve: 'keel approvals approve r1 c1',
      deny: 'keel approvals deny r1 c1 [--note "why"]',
    });
    const fromFlags = loadClientConfig(
      { tenant: 'alice', url: 'http://h:9000/', token: 'secret' },
      { KEEL_TOKEN: 'secret2' },
    );
    assert.equal(
      decideCommands('r1', 'c1', fromFlags.given).approve,
      'keel approvals approve r1 c1 --tenant alice --url http://h:9000',
    );
    assert.equal(
      decideCommands('r1', 'c1', { tenant: "o'brien x" }).approve,
      `keel approvals approve r1 c1 --tenant 'o'\\''brien x'`,
    );
  });

  it("approvals list shows each waiting call's arguments and its run's input, one line each", async () => {
    const submitted = await http('POST', `${T}/turns`, {
      agent: 'careful',
      scope: 'list',
      payload: { text: `${CALC}\nplease   work out\nthe answer` },
    });
    await waitFor(
      'the run waiting',
      async () => (await http('GET', `${T}/runs/${submitted.run_id}`)).run.status === 'waiting',
      { timeoutMs: 20_000, everyMs: 20 },
    );
    const listed = await startCli('approvals', 'list').done;
    assert.equal(listed.code, 0, listed.stderr);
    console.log(`# approvals list:\n${listed.stdout}`);
    const [header, ...rows] = listed.stdout.trimEnd().split('\n');
    assert.match(
      header ?? '',
      /^RUN +CALL +TOOL +ARGUMENTS +AGENT +SCOPE +REQUESTED +EXPIRES +INPUT$/,
    );
    const row = rows.find((line) => line.startsWith(submitted.run_id));
    assert.ok(row, listed.stdout);
    assert.match(row, /calc_eval +\{"expression":"6\*7"\} +careful +list /);
    // Whitespace (the newlines too) as one space, cut to 60 characters in the table…
    assert.ok(
      row.endsWith('  @call calc_eval {"expression":"6*7"} please work out the an…'),
      `the input on one line at the row's end: ${row}`,
    );
    // …and whole in --json.
    const json = await startCli('approvals', 'list', '--json').done;
    const approval = JSON.parse(json.stdout).approvals.find(
      (a: Loose) => a.run_id === submitted.run_id,
    );
    assert.equal(approval.input_text, `${CALC}\nplease   work out\nthe answer`);
    await http('POST', `${T}/runs/${submitted.run_id}/cancel`, {});
  });
});

describe(
  'keel chat shows the waiting call and decides it with /approve (tmux)',
  { skip: NO_TMUX },
  () => {
    it('prints the notice with /approve and the commands; /approve lets the answer finish', async () => {
      const chat = new TmuxSession([process.execPath, ...KEEL_CLI, 'chat', 'careful', 'tty'], {
        cwd: ROOT,
        env: { KEEL_URL: keel.url, KEEL_TENANT: 'ask' },
        afterExit: 'echo "EXIT=$?"; sleep 60',
      });
      try {
        await chat.shows(/you> $/m);
        chat.send('/approve', 'Enter');
        await chat.shows(/nothing waits for approval/);
        chat.send(CALC, 'Enter');
        const screen = await chat.shows(/or here: \/approve, or \/deny and the reason/);
        assert.match(screen, /⏸ waiting for approval: calc_eval \{"expression":"6\*7"\}/);
        assert.match(screen, /approve: keel approvals approve \S+ \S+/);
        const [run] = (await http('GET', `${T}/runs?scope=tty`)).runs;
        assert.equal(run.status, 'waiting');
        chat.send('/approve', 'Enter');
        const answered = await chat.shows(
          /careful> echo: \ncalc_eval: \{"expression":"6\*7","value":42\}\n/,
        );
        console.log(`# keel chat:\n${answered.trimEnd()}`);
        assert.match(answered, /✓ approved: the run goes on/);
        // The answer streams before the run's last write commits: wait for that write.
        await waitFor(
          'the run to succeed',
          async () => (await http('GET', `${T}/runs/${run.run_id}`)).run.status === 'succeeded',
        );

        // /deny with a reason: the model is told it, the tool never runs.
        chat.send('@call calc_eval {"expression":"7*7"}', 'Enter');
        await waitFor(
          'a second waiting run on tty',
          async () => (await http('GET', `${T}/runs?scope=tty`)).runs[0]?.status === 'waiting',
          { timeoutMs: 20_000, everyMs: 50 },
        );
        chat.send('/deny not in a chat test', 'Enter');
        const deniedScreen = await chat.shows(/careful> echo: \ncalc_eval: APPROVAL_DENIED\n/);
        assert.match(deniedScreen, /✗ denied: not in a chat test: the call does not run/);
        const [second] = (await http('GET', `${T}/runs?scope=tty`)).runs;
        const [decided] = (await http('GET', `${T}/runs/${second.run_id}/approvals`)).approvals;
        assert.equal(decided.status, 'denied');
        assert.equal(decided.note, 'not in a chat test');
        chat.send('/quit', 'Enter');
        assert.match(await chat.shows(/EXIT=\d+/), /EXIT=0/);
      } finally {
        chat.close();
      }
    });
  },
);
