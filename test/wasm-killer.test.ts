// A tenant's hostile module against a real `keel serve` child on SQLite
// (docs/wasm-tools.md, "Resource limits"). The attacker's `_start` looping `table.grow`
// used to abort the whole process (V8's fatal heap-limit error), and again on every
// restart while its run was resumed; now the call is a tool error, the run succeeds and
// the process stays up. And if keel is killed during a repeatable call anyway, twice,
// the third process answers the call TOOL_CRASHED instead of running it again: no crash
// loop. A module stored without the caps (before they existed, or by another path than
// the PUT) is capped, or refused, when a call loads it.

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import type { RoleProcess } from './helpers/keel-roles.ts';
import { RoleProcesses } from './helpers/keel-roles.ts';
import type { WatName } from './helpers/wasm-modules.ts';
import { buildModules, elementSegmentModule } from './helpers/wasm-modules.ts';
import { requestJson } from './helpers/json-request.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

const processes = new RoleProcesses();
const dirs: string[] = [];
let modules: Record<WatName, Uint8Array>;

const api = requestJson;

/** timeout_ms 2000: long enough that the old process died during the call (~0.7 s). */
function putTool(url: string, name: string, module: WatName, effect = 'read_only') {
  return api(url, 'PUT', `/v1/tenants/acme/wasm-tools/${name}`, {
    description: `${module} (${effect})`,
    effect,
    timeout_ms: 2_000,
    module_base64: Buffer.from(modules[module]).toString('base64'),
  });
}

async function submit(url: string, scope: string, text: string): Promise<string> {
  const submitted = await api(url, 'POST', '/v1/tenants/acme/turns', {
    agent: 'a',
    scope,
    payload: { text },
  });
  assert.equal(submitted.status, 202, submitted.text);
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
    resumed: events.filter((event) => event.type === 'run.resumed').map((event) => event.data),
  };
}

function alive(keel: RoleProcess): boolean {
  return keel.child.exitCode === null && keel.child.signalCode === null;
}

before(async () => {
  modules = await buildModules();
});

/** A data dir of its own (a test that fails leaves its process behind) with acme/a. */
async function freshStore(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'keel-wasm-killer-'));
  dirs.push(dir);
  const storeUrl = `sqlite:${join(dir, 'keel.db')}`;
  const setup = await processes.start('all', storeUrl);
  assert.equal((await api(setup.url, 'POST', '/v1/tenants', { name: 'acme' })).status, 201);
  const agent = await api(setup.url, 'PUT', '/v1/tenants/acme/agents/a', {
    model: 'fixture/echo',
    allowed_families: ['wasm'],
  });
  assert.equal(agent.status, 201, agent.text);
  await processes.stopAll();
  return storeUrl;
}

after(async () => {
  processes.killAll();
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

it("a tenant's table.grow loop is a tool error; keel stays up, and up after a restart", async () => {
  const storeUrl = await freshStore();
  const keel = await processes.start('all', storeUrl);
  // Tables that start over the cap are refused, naming the field; nothing is stored.
  const big = await putTool(keel.url, 'big', 'bigTables');
  assert.equal(big.status, 400, big.text);
  assert.equal(big.body.error.code, 'WASM_MODULE_INVALID');
  assert.match(big.body.error.message, /^module: the module's tables start with 120000/);
  assert.equal((await api(keel.url, 'GET', '/v1/tenants/acme/wasm-tools/big')).status, 404);

  const lines: string[] = [];
  for (const [name, module] of [
    ['tfunc', 'tableGrowFuncref'],
    ['text', 'tableGrowExternref'],
  ] as const) {
    assert.equal((await putTool(keel.url, name, module)).status, 201);
    const started = Date.now();
    const runId = await submit(keel.url, name, `@call wasm_${name} {}`);
    const done = await finished(keel.url, runId).catch((error: unknown) => {
      assert.fail(`keel died during ${module}: ${String(error)}\n${keel.output().slice(-600)}`);
    });
    assert.ok(alive(keel), `keel died during ${module}: ${keel.output().slice(-600)}`);
    assert.equal(done.run.status, 'succeeded', JSON.stringify(done.run));
    const [result] = done.results;
    assert.equal(result.ok, false);
    assert.equal(result.error.code, 'WASM_TIMEOUT', JSON.stringify(result));
    lines.push(`${module}: run succeeded in ${Date.now() - started} ms, ${result.error.code}`);
  }
  // A restart finds nothing to resume that could kill it: it comes up and answers.
  await processes.stopAll();
  const again = await processes.start('all', storeUrl);
  assert.equal((await api(again.url, 'GET', '/readyz')).status, 200);
  const rerun = await finished(again.url, await submit(again.url, 'tfunc2', '@call wasm_tfunc {}'));
  assert.equal(rerun.run.status, 'succeeded');
  assert.ok(alive(again));
  console.log(`${lines.join('; ')}; after restart: ${rerun.results[0]?.error?.code}, alive`);
  await processes.stopAll();
});

it('keel SIGKILLed twice during a repeatable call: the third process answers TOOL_CRASHED, the run succeeds', async () => {
  const storeUrl = await freshStore();
  const setup = await processes.start('all', storeUrl);
  assert.equal((await putTool(setup.url, 'echo', 'echo', 'idempotent')).status, 201);
  await processes.stopAll();
  let runId = '';
  for (let kill = 1; kill <= 2; kill++) {
    const doomed = await processes.start('all', storeUrl, {
      env: { KEEL_TEST_FAILPOINTS: '1', KEEL_FAILPOINTS: 'tool.after_call=1*kill' },
    });
    // The first process takes the turn; the second resumes the run at its start.
    if (kill === 1) runId = await submit(doomed.url, 'crash', '@call wasm_echo {"n": 1}');
    await doomed.exited;
    assert.equal(doomed.child.signalCode, 'SIGKILL', doomed.output().slice(-600));
  }
  const restarted = await processes.start('all', storeUrl);
  const done = await finished(restarted.url, runId);
  assert.equal(done.run.status, 'succeeded', JSON.stringify(done.run));
  const [result] = done.results;
  assert.equal(result.ok, false, JSON.stringify(result));
  assert.equal(result.error.code, 'TOOL_CRASHED');
  // Two intents (the first run and one re-run), no third run.
  assert.equal(done.calls.length, 2);
  const last = done.resumed[done.resumed.length - 1];
  assert.deepEqual(last.crashed_calls, [result.call_id]);
  assert.deepEqual(last.rerun_calls, []);
  console.log(
    `kills=2 tool.call events=${done.calls.length} result=${result.error.code} ` +
      `attempt=${done.run.attempt} run=${done.run.status}`,
  );
  await processes.stopAll();
});

it('modules stored without the caps: capped or refused at the call; keel stays up', async () => {
  const storeUrl = await freshStore();
  // Straight into the store, as a keel before the caps stored them: no PUT check.
  const store = await openSqliteStore({
    path: storeUrl.slice('sqlite:'.length),
    durability: 'process',
  });
  const raw: [string, Uint8Array][] = [
    ['size', modules.tableSize],
    ['grow', modules.tableGrowFuncref],
    ['big', modules.bigTables],
    ['elements', elementSegmentModule('passive', 200_000)],
  ];
  for (const [name, module] of raw) {
    const manifest = {
      description: `${name}, stored raw`,
      input_schema: { type: 'object' },
      effect: 'read_only',
      timeout_ms: 2_000,
      memory_limit_mb: 16,
      max_output_bytes: 65_536,
    };
    await store.putWasmTool('acme', name, { manifest, module });
  }
  await store.close();
  // The PUT refuses the huge element segment, naming the field.
  const keel = await processes.start('all', storeUrl);
  const put = await api(keel.url, 'PUT', '/v1/tenants/acme/wasm-tools/elements2', {
    description: 'elements',
    effect: 'read_only',
    module_base64: Buffer.from(elementSegmentModule('passive', 200_000)).toString('base64'),
  });
  assert.equal(put.status, 400, put.text);
  assert.equal(put.body.error.code, 'WASM_MODULE_INVALID');
  assert.match(put.body.error.message, /^module: element segment 0 brings/);

  const lines: string[] = [];
  const expected = {
    size: { ok: true, result: 99_010 },
    grow: { ok: false, code: 'WASM_TIMEOUT' },
    big: { ok: false, code: 'WASM_MODULE_INVALID' },
    elements: { ok: false, code: 'WASM_MODULE_INVALID' },
  };
  for (const [name, want] of Object.entries(expected)) {
    const started = Date.now();
    const runId = await submit(keel.url, `raw-${name}`, `@call wasm_${name} {}`);
    const done = await finished(keel.url, runId).catch((error: unknown) => {
      assert.fail(`keel died during ${name}: ${String(error)}\n${keel.output().slice(-600)}`);
    });
    assert.ok(alive(keel), `keel died during ${name}: ${keel.output().slice(-600)}`);
    assert.equal(done.run.status, 'succeeded', JSON.stringify(done.run));
    const [result] = done.results;
    const got = result.ok
      ? { ok: true, result: result.result }
      : { ok: false, code: result.error.code };
    assert.deepEqual(got, want, `${name}: ${JSON.stringify(result)}`);
    lines.push(`${name}: ${JSON.stringify(got)} in ${Date.now() - started} ms`);
  }
  assert.ok(alive(keel));
  console.log(`raw modules: ${lines.join('; ')}; keel alive`);
  await processes.stopAll();
});
