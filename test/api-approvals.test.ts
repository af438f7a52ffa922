// Approvals over HTTP on a whole keel in this process (store + worker + API, fixture
// model): require_approval checked at PUT, the waiting run in GET T/approvals and on the
// run, approve / deny / a second decision / cancel while waiting / timeout, and bad
// input refused in keel's error shape with nothing written (docs/approvals.md).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import type { TestKeel } from './helpers/keel-server.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import { waitFor } from './helpers/wait-for.ts';
import { KEEL_CLI } from './helpers/keel-cli.ts';

const T = '/v1/tenants/appr';
let keel: TestKeel;

// Tests read response bodies loosely; `any` keeps assertions short and is test-only.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

async function http(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Loose }> {
  const response = await fetch(`${keel.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

async function putAgent(name: string, extra: Record<string, unknown>) {
  return http('PUT', `${T}/agents/${name}`, { model: 'fixture/echo', ...extra });
}

/** Submits a turn that calls calc_eval, and waits until its run waits for approval. */
async function waitingRun(
  agent: string,
  scope: string,
): Promise<{ runId: string; callId: string }> {
  const submitted = await http('POST', `${T}/turns`, {
    agent,
    scope,
    payload: { text: '@call calc_eval {"expression":"6*7"}\nwhat is 6*7' },
  });
  assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
  const runId = submitted.body.run_id as string;
  await waitFor(
    'the run waiting',
    async () => {
      return (await http('GET', `${T}/runs/${runId}`)).body.run.status === 'waiting';
    },
    { timeoutMs: 20_000, everyMs: 20 },
  );
  const listed = await http('GET', `${T}/runs/${runId}/approvals`);
  assert.equal(listed.body.approvals.length, 1);
  return { runId, callId: listed.body.approvals[0].call_id as string };
}

async function finished(runId: string) {
  const waited = await http('GET', `${T}/runs/${runId}/wait?timeout_ms=20000`);
  assert.equal(waited.body.timed_out, false);
  return waited.body.run;
}

async function toolResult(runId: string) {
  const trace = await http('GET', `${T}/runs/${runId}/trace`);
  return trace.body.events.find((event: { type: string }) => event.type === 'tool.result')?.data;
}

const ROOT = new URL('..', import.meta.url).pathname;

/** `keel <args>` as a user runs it, against this keel and tenant. */
function keelCli(
  ...args: string[]
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('KEEL_')) env[key] = value;
  }
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...KEEL_CLI, ...args], {
      cwd: ROOT,
      env: { ...env, KEEL_URL: keel.url, KEEL_TENANT: 'appr' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('approvals over HTTP', () => {
  before(async () => {
    keel = await startTestKeel();
    await http('POST', '/v1/tenants', { name: 'appr' });
    const agent = await putAgent('careful', { require_approval: ['calc_*'] });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
  });
  after(() => keel.close());

  it('PUT refuses a require_approval entry that names no tool, naming the field; nothing is written', async () => {
    const refused = await putAgent('sloppy', { require_approval: ['calc_eval', 'send_mail'] });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.code, 'VALIDATION_FAILED');
    assert.match(refused.body.error.message, /require_approval/);
    assert.match(refused.body.error.message, /send_mail/);
    assert.equal((await http('GET', `${T}/agents/sloppy`)).status, 404);
    const badGlob = await putAgent('sloppy', { require_approval: ['calc eval'] });
    assert.equal(badGlob.status, 400);
    // Patterns in the tenant families are accepted before their tools exist.
    const family = await putAgent('mailer', { require_approval: ['mcp_mail_*', 'wasm_*'] });
    assert.equal(family.status, 201, JSON.stringify(family.body));
    const timeout = await putAgent('sloppy', { approval_timeout_ms: 5 });
    assert.equal(timeout.status, 400);
    assert.match(timeout.body.error.message, /approval_timeout_ms/);
  });

  it('approve: the run waits (listed, no worker held), then runs the call once and succeeds', async () => {
    const { runId, callId } = await waitingRun('careful', 'approve');
    assert.equal(keel.worker.activeRuns, 0, 'a waiting run holds no worker slot');
    const pending = await http('GET', `${T}/approvals`);
    assert.ok(pending.body.approvals.some((a: { run_id: string }) => a.run_id === runId));
    const approval = pending.body.approvals.find((a: { run_id: string }) => a.run_id === runId);
    assert.equal(approval.tool, 'calc_eval');
    assert.equal(approval.arguments, '{"expression":"6*7"}');
    assert.equal(approval.status, 'pending');
    // What the person is asked about comes with what the run was asked.
    assert.equal(approval.input_text, '@call calc_eval {"expression":"6*7"}\nwhat is 6*7');
    // A later turn in the same scope queues behind the waiting run (the lane is held).
    const later = await http('POST', `${T}/turns`, {
      agent: 'careful',
      scope: 'approve',
      payload: { text: 'and then?' },
    });
    const decided = await http('POST', `${T}/runs/${runId}/approvals/${callId}`, {
      decision: 'approve',
    });
    assert.equal(decided.status, 200, JSON.stringify(decided.body));
    assert.equal(decided.body.approval.status, 'approved');
    const run = await finished(runId);
    assert.equal(run.status, 'succeeded');
    const result = await toolResult(runId);
    assert.equal(result.ok, true);
    assert.equal(result.result.value, 42);
    const second = await http('POST', `${T}/runs/${runId}/approvals/${callId}`, {
      decision: 'deny',
    });
    assert.equal(second.status, 409);
    assert.equal(second.body.error.code, 'APPROVAL_DECIDED');
    const laterRun = await finished(later.body.run_id);
    assert.equal(laterRun.status, 'succeeded');
    assert.ok(laterRun.created_at > run.created_at);
  });

  it('deny: the model gets APPROVAL_DENIED with the note; the tool never ran', async () => {
    const { runId, callId } = await waitingRun('careful', 'deny');
    const decided = await http('POST', `${T}/runs/${runId}/approvals/${callId}`, {
      decision: 'deny',
      note: 'ask me on Monday',
    });
    assert.equal(decided.status, 200);
    assert.equal((await finished(runId)).status, 'succeeded');
    const result = await toolResult(runId);
    assert.deepEqual(result.error, { code: 'APPROVAL_DENIED', message: 'ask me on Monday' });
    const trace = await http('GET', `${T}/runs/${runId}/trace`);
    const calls = trace.body.events.filter(
      (e: { type: string; data: { effect?: string } }) => e.type === 'tool.call',
    );
    assert.equal(calls.length, 1);
    assert.equal(calls[0].data.effect, undefined, 'no intent record: the tool never started');
  });

  it('cancel while waiting ends the run; the approval is closed and cannot be decided', async () => {
    const { runId, callId } = await waitingRun('careful', 'cancel');
    const cancelled = await http('POST', `${T}/runs/${runId}/cancel`, {
      reason: 'changed my mind',
    });
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    assert.equal((await finished(runId)).status, 'cancelled');
    const decided = await http('POST', `${T}/runs/${runId}/approvals/${callId}`, {
      decision: 'approve',
    });
    assert.equal(decided.status, 409);
    const [closed] = (await http('GET', `${T}/runs/${runId}/approvals`)).body.approvals;
    assert.equal(closed.status, 'cancelled');
  });

  it('on_busy with a waiting run: steer queues behind it, interrupt cancels it and runs next', async () => {
    const { runId, callId } = await waitingRun('careful', 'busy');
    const steered = await http('POST', `${T}/turns`, {
      agent: 'careful',
      scope: 'busy',
      payload: { text: 'later' },
      on_busy: 'steer',
    });
    assert.equal(steered.status, 202, JSON.stringify(steered.body));
    assert.equal(steered.body.steered, false, 'a waiting run takes no steered turn');
    assert.notEqual(steered.body.run_id, runId);
    assert.equal((await http('GET', `${T}/runs/${runId}`)).body.run.status, 'waiting');
    const interrupting = await http('POST', `${T}/turns`, {
      agent: 'careful',
      scope: 'busy',
      payload: { text: 'instead' },
      on_busy: 'interrupt',
    });
    assert.equal(interrupting.status, 202, JSON.stringify(interrupting.body));
    assert.equal((await finished(runId)).status, 'cancelled');
    const [closed] = (await http('GET', `${T}/runs/${runId}/approvals`)).body.approvals;
    assert.equal(closed.status, 'cancelled');
    const decided = await http('POST', `${T}/runs/${runId}/approvals/${callId}`, {
      decision: 'approve',
    });
    assert.equal(decided.status, 409);
    assert.equal((await finished(steered.body.run_id)).status, 'succeeded');
    assert.equal((await finished(interrupting.body.run_id)).status, 'succeeded');
  });

  it('approval_timeout_ms: nobody decides, the sweep denies with APPROVAL_TIMEOUT', async () => {
    const agent = await putAgent('impatient', {
      require_approval: ['calc_eval'],
      approval_timeout_ms: 1000,
    });
    assert.equal(agent.status, 201);
    const { runId } = await waitingRun('impatient', 'timeout');
    assert.equal((await finished(runId)).status, 'succeeded');
    const result = await toolResult(runId);
    assert.equal(result.error.code, 'APPROVAL_TIMEOUT');
    const [expired] = (await http('GET', `${T}/runs/${runId}/approvals`)).body.approvals;
    assert.equal(expired.status, 'timed_out');
  });

  it('bad decisions: 400 naming the field, 404 for an unknown call or run', async () => {
    const { runId, callId } = await waitingRun('careful', 'bad');
    const bad = await http('POST', `${T}/runs/${runId}/approvals/${callId}`, { decision: 'maybe' });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /decision/);
    const extra = await http('POST', `${T}/runs/${runId}/approvals/${callId}`, {
      decision: 'approve',
      by: 'me',
    });
    assert.equal(extra.status, 400);
    assert.equal(extra.body.error.code, 'UNKNOWN_FIELD');
    const noCall = await http('POST', `${T}/runs/${runId}/approvals/nope`, { decision: 'approve' });
    assert.equal(noCall.status, 404);
    assert.equal(noCall.body.error.code, 'APPROVAL_NOT_FOUND');
    const noRun = await http('POST', `${T}/runs/nope/approvals/${callId}`, { decision: 'approve' });
    assert.equal(noRun.status, 404);
    assert.equal(noRun.body.error.code, 'RUN_NOT_FOUND');
    // Still pending after all that: nothing was written.
    const [still] = (await http('GET', `${T}/runs/${runId}/approvals`)).body.approvals;
    assert.equal(still.status, 'pending');
    await http('POST', `${T}/runs/${runId}/cancel`);
  });

  it('keel approvals list | deny --note | a second decision exits non-zero with APPROVAL_DECIDED', async () => {
    const { runId, callId } = await waitingRun('careful', 'cli');
    const listed = await keelCli('approvals', 'list');
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok(listed.stdout.includes(`${runId}  ${callId}  calc_eval`), listed.stdout);
    const denied = await keelCli('approvals', 'deny', runId, callId, '--note', 'not now');
    assert.equal(denied.code, 0, denied.stderr);
    assert.equal(denied.stdout.trim(), `${runId} ${callId} denied`);
    const again = await keelCli('approvals', 'approve', runId, callId);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /APPROVAL_DECIDED/);
    assert.deepEqual((await toolResult(runId)).error, {
      code: 'APPROVAL_DENIED',
      message: 'not now',
    });
  });
});
