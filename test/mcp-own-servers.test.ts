// MCP through a real `keel serve` child process against keel's own small test server
// (test/fixtures/mcp-test-server.mjs), for what the reference servers lack: annotation →
// effect, a server that lies in its tool list, a hanging call (timeout + cancellation
// sent), a flood of output (capped), a server SIGKILLed mid-call (restarted for the
// next call), and keel itself SIGKILLed mid-call (idempotent → re-run with the same key;
// effectful → OUTCOME_UNKNOWN).

import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { waitFor } from './helpers/wait-for.ts';
import { freePort } from '../src/cli/demo-processes.ts';
import { KEEL_CLI } from './helpers/keel-cli.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const SERVER = join(ROOT, 'test/fixtures/mcp-test-server.mjs');
const TENANT = 'own';
const children = new Set<ChildProcess>();
const dir = mkdtempSync(join(tmpdir(), 'keel-mcp-own-'));
const LOG = join(dir, 'calls.jsonl');
/** While this file exists the `fragile` server refuses to start. */
const BROKEN = join(dir, 'broken');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

interface Served {
  child: ChildProcess;
  url: string;
  exited: Promise<unknown>;
}

async function serve(): Promise<Served> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('KEEL_')) env[key] = value;
  }
  const child = spawn(process.execPath, [...KEEL_CLI, 'serve', '--listen', `127.0.0.1:${port}`], {
    cwd: ROOT,
    env: {
      ...env,
      KEEL_LOG_LEVEL: 'warn',
      KEEL_TEST_MCP_LOG: LOG,
      KEEL_CONFIG: join(dir, 'keel.toml'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  void exited.then(() => children.delete(child));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no ready line; stderr: ${err}`)), 20_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /^keel listening on (http:\/\/\S+) /m.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void exited.then(() => reject(new Error(`serve exited early; stderr: ${err}`)));
  });
  return { child, url, exited };
}

let keel: Served;

async function api(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Loose }> {
  const response = await fetch(`${keel.url}/v1/tenants/${TENANT}${path}`, {
    method,
    headers: method === 'GET' ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

async function submit(text: string, scope: string, agent = 'a'): Promise<string> {
  const submitted = await api('POST', '/turns', { agent, scope, payload: { text } });
  assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
  return submitted.body.run_id as string;
}

async function finished(runId: string): Promise<Loose> {
  const waited = await api('GET', `/runs/${runId}/wait?timeout_ms=60000`);
  assert.equal(waited.body.timed_out, false);
  return waited.body.run;
}

async function results(runId: string): Promise<Loose[]> {
  const trace = await api('GET', `/runs/${runId}/trace?limit=1000`);
  return trace.body.events
    .filter((event: Loose) => event.type === 'tool.result')
    .map((event: Loose) => event.data);
}

function calls(): Loose[] {
  if (!existsSync(LOG)) return [];
  return readFileSync(LOG, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** The server's record of the call for `tool`, once it arrived. */
async function arrived(tool: string, after: number): Promise<Loose> {
  return waitFor(
    `${tool} reached the MCP server`,
    () =>
      calls()
        .slice(after)
        .find((entry) => entry.tool === tool),
    { timeoutMs: 20_000 },
  );
}

async function killKeel(): Promise<void> {
  keel.child.kill('SIGKILL');
  await keel.exited;
}

before(async () => {
  writeFileSync(
    join(dir, 'keel.toml'),
    `data_dir = ${JSON.stringify(join(dir, 'data'))}
[mcp.stdio.own]
command = ${JSON.stringify(process.execPath)}
args = [${JSON.stringify(SERVER)}]
env_from = { MCP_TEST_LOG = "KEEL_TEST_MCP_LOG" }

[mcp.stdio.fragile]
command = ${JSON.stringify(process.execPath)}
args = [${JSON.stringify(SERVER)}, "--fail-if-exists", ${JSON.stringify(BROKEN)}]

[mcp.stdio.twins]
command = ${JSON.stringify(process.execPath)}
args = [${JSON.stringify(SERVER)}, "--extra", "READ"]

[mcp.stdio.prefixed]
command = ${JSON.stringify(process.execPath)}
args = [${JSON.stringify(SERVER)}, "--extra", "b_read"]

[mcp.stdio.liar]
command = ${JSON.stringify(process.execPath)}
args = [${JSON.stringify(SERVER)}, "--bad-schema"]
`,
  );
  keel = await serve();
  const tenant = await fetch(`${keel.url}/v1/tenants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: TENANT }),
  });
  assert.equal(tenant.status, 201);
  const agent = await api('PUT', '/agents/a', {
    model: 'fixture/echo',
    allowed_families: ['mcp'],
    tool_timeout_ms: 2000,
  });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
  // For calls a kill must end, not the timeout: a server process started again on a
  // loaded machine can take most of 2 s before the call reaches it.
  const patient = await api('PUT', '/agents/patient', {
    model: 'fixture/echo',
    allowed_families: ['mcp'],
    tool_timeout_ms: 30_000,
  });
  assert.equal(patient.status, 201, JSON.stringify(patient.body));
});

after(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('MCP with keel-owned test servers through keel serve', () => {
  it('each annotation gives its effect', async () => {
    const put = await api('PUT', '/mcp/own', { transport: { type: 'stdio', server: 'own' } });
    assert.equal(put.status, 201, JSON.stringify(put.body));
    const effects = Object.fromEntries(
      put.body.tools.map((tool: Loose) => [tool.mcp_name, tool.effect]),
    );
    assert.deepEqual(effects, {
      read: 'read_only',
      upsert: 'idempotent',
      send: 'effectful',
      hang: 'read_only',
      flood: 'read_only',
    });
  });

  it('a server that lies in its tool list is a clear 400 at PUT, nothing stored', async () => {
    const put = await api('PUT', '/mcp/liar', { transport: { type: 'stdio', server: 'liar' } });
    assert.equal(put.status, 400);
    assert.equal(put.body.error.code, 'MCP_SERVER_FAILED');
    assert.match(put.body.error.message, /"liar" has an invalid input schema/);
    assert.equal((await api('GET', '/mcp/liar')).status, 404);
  });

  it('tool names that collide after sanitising are a 400, within a server and across servers', async () => {
    const within = await api('PUT', '/mcp/twins', {
      transport: { type: 'stdio', server: 'twins' },
    });
    assert.equal(within.status, 400);
    assert.match(within.body.error.message, /"READ" becomes mcp_twins_read, which the tool "read"/);
    assert.equal((await api('GET', '/mcp/twins')).status, 404);
    // Server `a_b` tool `read` and server `a` tool `b_read` are both mcp_a_b_read.
    const first = await api('PUT', '/mcp/a_b', { transport: { type: 'stdio', server: 'own' } });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const across = await api('PUT', '/mcp/a', { transport: { type: 'stdio', server: 'prefixed' } });
    assert.equal(across.status, 400, JSON.stringify(across.body));
    assert.match(across.body.error.message, /mcp_a_b_read, which another server of this tenant/);
    assert.equal((await api('DELETE', '/mcp/a_b')).status, 200);
  });

  it('a hanging call times out, the server is told to cancel, and the run goes on', async () => {
    const before = calls().length;
    const run = await finished(
      await submit('@call mcp_own_hang {}\n@call mcp_own_read {}', 'hang'),
    );
    assert.equal(run.status, 'succeeded');
    const [hang, read] = await results(run.run_id);
    assert.equal(hang.error.code, 'TOOL_TIMEOUT');
    assert.equal(read.ok, true);
    await waitFor('the server saw the cancellation', () =>
      calls()
        .slice(before)
        .some((entry) => entry.cancelled === 'hang'),
    );
  });

  it('a flood of output is capped: an error result, and the next call gets a fresh server', async () => {
    const run = await finished(
      await submit('@call mcp_own_flood {"bytes": 3000000}\n@call mcp_own_read {}', 'flood'),
    );
    assert.equal(run.status, 'succeeded');
    const [flood, read] = await results(run.run_id);
    assert.equal(flood.ok, false);
    assert.equal(flood.error.code, 'MCP_SERVER_EXITED', JSON.stringify(flood));
    assert.match(flood.error.message, /maximum size of 1048576/);
    assert.equal(read.ok, true, JSON.stringify(read));
  });

  it('a server SIGKILLed mid-call: effectful → OUTCOME_UNKNOWN, idempotent → error; restarted next call', async () => {
    const start = calls().length;
    const runId = await submit(
      '@call mcp_own_send {"hang": true}\n@call mcp_own_upsert {"hang": true}\n@call mcp_own_read {}',
      'kill',
      'patient',
    );
    const send = await arrived('send', start);
    process.kill(send.pid, 'SIGKILL');
    const upsert = await arrived('upsert', start);
    assert.notEqual(upsert.pid, send.pid, 'a new process answers after the kill');
    process.kill(upsert.pid, 'SIGKILL');
    const run = await finished(runId);
    assert.equal(run.status, 'succeeded');
    const [sent, upserted, read] = await results(runId);
    assert.equal(sent.error.code, 'OUTCOME_UNKNOWN', JSON.stringify(sent));
    assert.equal(upserted.error.code, 'MCP_SERVER_EXITED', JSON.stringify(upserted));
    assert.equal(read.ok, true);
    const pids = new Set(
      calls()
        .slice(start)
        .map((entry) => entry.pid),
    );
    console.log(`server processes across two kills: ${pids.size}`);
    assert.equal(pids.size, 3);
  });

  it('keel SIGKILLed mid-call: the idempotent call re-runs with the same key, the effectful one is OUTCOME_UNKNOWN', async () => {
    const start = calls().length;
    const runId = await submit('@call mcp_own_upsert {"hang": true}', 'crash-idem', 'patient');
    const first = await arrived('upsert', start);
    assert.equal(first.key, `${runId}:call_1_1`, 'the idempotency key travels in _meta');
    await killKeel();
    keel = await serve();
    const run = await finished(runId);
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    const upserts = calls()
      .slice(start)
      .filter((entry) => entry.tool === 'upsert');
    assert.equal(upserts.length, 2, 'one call before the crash, one re-run after');
    assert.equal(upserts[1].key, first.key, 'the re-run carries the same idempotency key');
    assert.equal((await results(runId)).at(-1).ok, true);

    const mark = calls().length;
    const effectful = await submit('@call mcp_own_send {"hang": true}', 'crash-eff', 'patient');
    await arrived('send', mark);
    await killKeel();
    keel = await serve();
    const done = await finished(effectful);
    assert.equal(done.status, 'succeeded');
    const [unknown] = (await results(effectful)).slice(-1);
    assert.equal(unknown.error.code, 'OUTCOME_UNKNOWN');
    assert.equal(
      calls()
        .slice(mark)
        .filter((entry) => entry.tool === 'send').length,
      1,
      'an effectful call is never repeated',
    );
    console.log(`keel kills: 2; upsert calls for key ${first.key}: ${upserts.length}`);
  });

  it('servers are rediscovered at startup: a failure is last_error + a metric, never fatal', async () => {
    const put = await api('PUT', '/mcp/fragile', {
      transport: { type: 'stdio', server: 'fragile' },
    });
    assert.equal(put.status, 201, JSON.stringify(put.body));
    assert.equal(put.body.last_error, null);
    writeFileSync(BROKEN, '');
    await killKeel();
    keel = await serve();
    const server = await waitFor('the rediscovery failure is recorded', async () => {
      const got = await api('GET', '/mcp/fragile');
      return got.body.last_error ? got.body : null;
    });
    assert.match(server.last_error, /refusing to start/);
    assert.equal(server.tools.length, 5, 'the tools of the last good discovery stay');
    const metrics = await (await fetch(`${keel.url}/metrics`)).text();
    assert.match(metrics, /^keel_mcp_discovery_failures_total 1$/m);
    // keel itself is fine, and the other servers were rediscovered.
    assert.equal((await api('GET', '/mcp/own')).body.last_error, null);
    const run = await finished(await submit('@call mcp_own_read {}', 'after-restart'));
    assert.equal((await results(run.run_id))[0].ok, true);
  });
});
