// The effect rules hold for WebAssembly tools across a crash (docs/wasm-tools.md): a real
// `keel serve` child on SQLite is SIGKILLed by the fault point tool.after_call — the
// module has run, its result is not yet committed — and restarted on the same data dir.
// An idempotent tool runs again with the same idempotency key; an effectful one is
// answered OUTCOME_UNKNOWN instead of a second run.

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { RoleProcesses } from './helpers/keel-roles.ts';
import { buildModules } from './helpers/wasm-modules.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

const processes = new RoleProcesses();
let dir: string;
let storeUrl: string;

async function api(url: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Loose) : null, text };
}

/** Starts keel killed at the first tool.after_call, runs `call`, waits for the kill. */
async function killedDuring(call: string, scope: string): Promise<string> {
  const doomed = await processes.start('all', storeUrl, {
    env: { KEEL_TEST_FAILPOINTS: '1', KEEL_FAILPOINTS: 'tool.after_call=1*kill' },
  });
  const submitted = await api(doomed.url, 'POST', '/v1/tenants/acme/turns', {
    agent: 'a',
    scope,
    payload: { text: call },
  });
  assert.equal(submitted.status, 202, submitted.text);
  await doomed.exited;
  assert.equal(doomed.child.signalCode, 'SIGKILL', doomed.output());
  return submitted.body.run_id as string;
}

async function finished(url: string, runId: string) {
  const waited = await api(url, 'GET', `/v1/tenants/acme/runs/${runId}/wait?timeout_ms=60000`);
  const trace = await api(url, 'GET', `/v1/tenants/acme/runs/${runId}/trace?limit=1000`);
  const events = trace.body.events as Loose[];
  return {
    run: waited.body.run,
    calls: events.filter((event) => event.type === 'tool.call'),
    results: events.filter((event) => event.type === 'tool.result').map((event) => event.data),
  };
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'keel-wasm-crash-'));
  storeUrl = `sqlite:${join(dir, 'keel.db')}`;
  const modules = await buildModules();
  const setup = await processes.start('all', storeUrl);
  assert.equal((await api(setup.url, 'POST', '/v1/tenants', { name: 'acme' })).status, 201);
  const agent = await api(setup.url, 'PUT', '/v1/tenants/acme/agents/a', {
    model: 'fixture/echo',
    allowed_families: ['wasm'],
  });
  assert.equal(agent.status, 201, agent.text);
  for (const [name, effect] of [
    ['echo', 'idempotent'],
    ['send', 'effectful'],
  ]) {
    const put = await api(setup.url, 'PUT', `/v1/tenants/acme/wasm-tools/${name}`, {
      description: `echo (${effect})`,
      effect,
      module_base64: Buffer.from(modules.echo).toString('base64'),
    });
    assert.equal(put.status, 201, put.text);
  }
  await processes.stopAll();
});

after(async () => {
  processes.killAll();
  await rm(dir, { recursive: true, force: true });
});

it('a crash during an idempotent wasm call re-runs it with the same key; effectful → OUTCOME_UNKNOWN', async () => {
  // Effectful first: the second process resumes it without running the module (so
  // without reaching the fault point) and is then killed in the idempotent call.
  const effectfulRun = await killedDuring('@call wasm_send {"n": 2}', 's2');
  const idempotentRun = await killedDuring('@call wasm_echo {"n": 1}', 's1');
  const restarted = await processes.start('all', storeUrl);

  const idempotent = await finished(restarted.url, idempotentRun);
  assert.equal(idempotent.run.status, 'succeeded', JSON.stringify(idempotent.run));
  const [echoed] = idempotent.results;
  assert.equal(echoed.ok, true, JSON.stringify(echoed));
  const key = `${idempotentRun}:${echoed.call_id}`;
  assert.equal(echoed.result.idempotency_key, key, 'the re-run saw the same key');
  assert.deepEqual(echoed.result.arguments, { n: 1 });

  const effectful = await finished(restarted.url, effectfulRun);
  assert.equal(effectful.run.status, 'succeeded', JSON.stringify(effectful.run));
  const [unknown] = effectful.results;
  assert.equal(unknown.ok, false);
  assert.equal(unknown.error.code, 'OUTCOME_UNKNOWN');
  console.log(
    `kills=2 idempotent: tool.call events=${idempotent.calls.length} result=ok key=${echoed.result.idempotency_key === key ? 'same' : 'different'}; ` +
      `effectful: tool.call events=${effectful.calls.length} result=${unknown.error.code}`,
  );
  // The intent was recorded before the crash; the idempotent call ran again (a second
  // intent), the effectful one did not.
  assert.equal(idempotent.calls.length, 2);
  assert.ok(idempotent.calls.every((event: Loose) => event.data.call_id === echoed.call_id));
  assert.equal(effectful.calls.length, 1);
});
