// MCP servers per tenant through a real `keel serve` child process on loopback HTTP, against the reference
// servers from npm (server-everything, server-memory) as real child processes, driven
// by the fixture model's `@call mcp_…` lines. Also the security rules of attaching.

import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import type { Server } from 'node:http';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { waitFor } from './helpers/wait-for.ts';
import { KEEL_CLI } from './helpers/keel-cli.ts';

const MODULES = resolve(import.meta.dirname, '../node_modules/@modelcontextprotocol');
const EVERYTHING = join(MODULES, 'server-everything/dist/index.js');
const MEMORY = join(MODULES, 'server-memory/dist/index.js');
const SECRET_VALUE = 'sk-very-secret-value-4c1d';
let memoryFile: string;

/** A real `keel serve` child process; its stdout and stderr (debug logs) are kept. */
let keel: { url: string; child: ChildProcess; exited: Promise<unknown> };
let workDir: string;
/** server-everything over streamable HTTP, behind a proxy that records the Authorization headers. */
let httpServer: ChildProcess;
let proxy: Server;
let proxyUrl: string;
const authorizations: (string | undefined)[] = [];

async function startHttpEverything(): Promise<void> {
  const port = await new Promise<number>((done) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address() as AddressInfo;
      probe.close(() => done(address.port));
    });
  });
  httpServer = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
    env: { PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let said = '';
  httpServer.stderr?.on('data', (chunk: Buffer) => (said += chunk.toString()));
  await waitFor('server-everything listens over HTTP', () => said.includes('listening on port'));
  proxy = createServer((request, response) => {
    authorizations.push(request.headers.authorization);
    const upstream = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: request.url,
        method: request.method,
        headers: request.headers,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on('error', () => response.destroy());
    request.pipe(upstream);
  });
  await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
}
const logLines: string[] = [];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

async function api(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Loose; text: string }> {
  const response = await fetch(`${keel.url}${path}`, {
    method,
    headers: method === 'GET' || method === 'DELETE' ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null, text };
}

async function turn(tenant: string, agent: string, text: string, scope = 's1'): Promise<Loose> {
  const submitted = await api('POST', `/v1/tenants/${tenant}/turns`, {
    agent,
    scope,
    payload: { text },
  });
  assert.equal(submitted.status, 202, submitted.text);
  const waited = await api(
    'GET',
    `/v1/tenants/${tenant}/runs/${submitted.body.run_id}/wait?timeout_ms=60000`,
  );
  return waited.body.run;
}

async function traceOf(tenant: string, runId: string): Promise<Loose[]> {
  return (await api('GET', `/v1/tenants/${tenant}/runs/${runId}/trace?limit=1000`)).body.events;
}

async function toolResults(runId: string, tenant = 'acme'): Promise<Loose[]> {
  const events = await traceOf(tenant, runId);
  return events.filter((event) => event.type === 'tool.result').map((event) => event.data);
}

/** One turn of acme's agent `a` making `calls` (one `@call` line each): it must succeed; its tool results. */
async function succeededCalls(calls: string[], scope = 's1'): Promise<Loose[]> {
  const run = await turn('acme', 'a', calls.join('\n'), scope);
  assert.equal(run.status, 'succeeded', JSON.stringify(run));
  return toolResults(run.run_id);
}

async function freePort(): Promise<number> {
  return new Promise((done) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address() as AddressInfo;
      probe.close(() => done(address.port));
    });
  });
}

async function serveKeel(env: Record<string, string>): Promise<void> {
  const clean: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('KEEL_')) clean[key] = value;
  }
  const port = await freePort();
  const child = spawn(process.execPath, [...KEEL_CLI, 'serve', '--listen', `127.0.0.1:${port}`], {
    cwd: resolve(import.meta.dirname, '..'),
    env: { ...clean, ...env, KEEL_LOG_LEVEL: 'debug' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((done) => child.once('exit', done));
  child.stderr?.on('data', (chunk: Buffer) => logLines.push(chunk.toString('utf8')));
  const url = await new Promise<string>((done, fail) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      logLines.push(chunk.toString('utf8'));
      const match = /keel listening on (http:\/\/\S+) /.exec(logLines.join(''));
      if (match?.[1]) done(match[1]);
    });
    void exited.then(() => fail(new Error(`keel serve exited: ${logLines.join('')}`)));
  });
  keel = { url, child, exited };
}

const toml = `
[mcp]
allow_hosts = ["127.0.0.1"]

[mcp.stdio.everything]
command = ${JSON.stringify(process.execPath)}
args = [${JSON.stringify(EVERYTHING)}, "stdio"]
env_from = { DECLARED_VAR = "KEEL_TEST_DECLARED" }

[mcp.stdio.memory]
command = ${JSON.stringify(process.execPath)}
args = [${JSON.stringify(MEMORY)}]
env_from = { MEMORY_FILE_PATH = "KEEL_TEST_MEMORY_FILE" }

[mcp.stdio.private]
command = ${JSON.stringify(process.execPath)}
args = [${JSON.stringify(EVERYTHING)}, "stdio"]
tenants = ["other"]

[mcp.stdio.broken]
command = ${JSON.stringify(process.execPath)}
args = ["-e", "process.stderr.write('cannot start: no config'); process.exit(3)"]
`;

before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'keel-mcp-e2e-'));
  memoryFile = join(workDir, 'memory.jsonl');
  await writeFile(
    join(workDir, 'keel.toml'),
    `data_dir = ${JSON.stringify(join(workDir, 'data'))}\n${toml}`,
  );
  await startHttpEverything();
  await serveKeel({
    KEEL_CONFIG: join(workDir, 'keel.toml'),
    KEEL_TEST_DECLARED: 'declared-value',
    KEEL_TEST_MEMORY_FILE: memoryFile,
    NOT_DECLARED: 'keel-only',
  });
  for (const tenant of ['acme', 'other']) {
    assert.equal((await api('POST', '/v1/tenants', { name: tenant })).status, 201);
    const agent = await api('PUT', `/v1/tenants/${tenant}/agents/a`, {
      model: 'fixture/echo',
      allowed_families: ['mcp'],
      tool_timeout_ms: 3000,
    });
    assert.equal(agent.status, 201, agent.text);
  }
  // For first calls to a server that starts on demand: on a loaded machine its start
  // alone can take most of a 3 s tool timeout.
  const patient = await api('PUT', '/v1/tenants/acme/agents/patient', {
    model: 'fixture/echo',
    allowed_families: ['mcp'],
    tool_timeout_ms: 30_000,
  });
  assert.equal(patient.status, 201, patient.text);
});
after(async () => {
  keel?.child.kill('SIGTERM');
  await keel?.exited;
  await rm(workDir, { recursive: true, force: true });
  httpServer?.kill();
  proxy?.closeAllConnections();
  proxy?.close();
});

describe('MCP servers per tenant (reference servers over stdio)', () => {
  it('attaches a declared server after listing its tools; GET shows them, not the command', async () => {
    const put = await api('PUT', '/v1/tenants/acme/mcp/everything', {
      enabled: true,
      transport: { type: 'stdio', server: 'everything' },
      allowed_tools: [
        'echo',
        'get-sum',
        'get-env',
        'trigger-long-running-operation',
        'gzip-file-as-resource',
      ],
    });
    assert.equal(put.status, 201, put.text);
    const names = put.body.tools.filter((t: Loose) => t.allowed).map((t: Loose) => t.name);
    assert.deepEqual(names.sort(), [
      'mcp_everything_echo',
      'mcp_everything_get_env',
      'mcp_everything_get_sum',
      'mcp_everything_gzip_file_as_resource',
      'mcp_everything_trigger_long_running_operation',
    ]);
    assert.doesNotMatch(put.text, /server-everything|command/);
    const listed = await api('GET', '/v1/tenants/acme/mcp');
    assert.deepEqual(
      listed.body.servers.map((s: Loose) => s.name),
      ['everything'],
    );
    const tools = await api('GET', '/v1/tenants/acme/tools?agent=a');
    const visible = tools.body.tools.map((t: Loose) => t.name);
    assert.ok(visible.includes('mcp_everything_get_sum'), visible.join());
    assert.ok(!visible.includes('mcp_everything_get_tiny_image'), 'allowed_tools narrows');
    const sum = tools.body.tools.find((t: Loose) => t.name === 'mcp_everything_get_sum');
    assert.equal(sum.family, 'mcp');
    assert.deepEqual(Object.keys(sum.input_schema.properties).sort(), ['a', 'b']);
  });

  it('echo and get-sum answer through a run; get-env shows only the declared variables', async () => {
    const [echo, sum, env] = await succeededCalls([
      '@call mcp_everything_echo {"message": "hello mcp"}',
      '@call mcp_everything_get_sum {"a": 2, "b": 40}',
      '@call mcp_everything_get_env {}',
    ]);
    assert.equal(echo.ok, true, JSON.stringify(echo));
    assert.match(JSON.stringify(echo.result), /hello mcp/);
    assert.match(JSON.stringify(sum.result), /42/);
    assert.equal(env.ok, true, JSON.stringify(env));
    const variables = env.result.value as Record<string, string>;
    assert.equal(variables.DECLARED_VAR, 'declared-value');
    for (const leaked of ['NOT_DECLARED', 'KEEL_TEST_DECLARED', 'HOME', 'PATH', 'USER']) {
      assert.equal(variables[leaked], undefined, `${leaked} reached the server`);
    }
    console.log(`get-env saw: ${Object.keys(variables).sort().join(', ')}`);
  });

  it('a server-side error and an argument that fails the schema are {ok:false}; the run goes on', async () => {
    const [serverError, badArgs, echo] = await succeededCalls([
      '@call mcp_everything_gzip_file_as_resource {"name": "x.gz", "data": "ftp://example.com/x"}',
      '@call mcp_everything_get_sum {"a": "two", "b": 1}',
      '@call mcp_everything_echo {"message": "still here"}',
    ]);
    assert.equal(serverError.ok, false);
    assert.equal(serverError.error.code, 'MCP_TOOL_ERROR', JSON.stringify(serverError));
    assert.match(serverError.error.message, /Unsupported URL protocol/);
    assert.equal(badArgs.ok, false);
    assert.equal(badArgs.error.code, 'INVALID_ARGUMENTS');
    assert.equal(echo.ok, true);
  });

  it('a long-running tool is cut at tool_timeout_ms (cancellation sent) and the run goes on', async () => {
    const [long, echo] = await succeededCalls([
      '@call mcp_everything_trigger_long_running_operation {"duration": 30, "steps": 30}',
      '@call mcp_everything_echo {"message": "after"}',
    ]);
    assert.equal(long.ok, false);
    assert.equal(long.error.code, 'TOOL_TIMEOUT', JSON.stringify(long));
    assert.equal(echo.ok, true, 'the same session answers the next call');
    console.log(`long-running call stopped after ${long.duration_ms} ms`);
  });

  it("cancelling the run mid-call ends it; the tenant's session still answers", async () => {
    const submitted = await api('POST', '/v1/tenants/acme/turns', {
      agent: 'a',
      scope: 'cancel',
      payload: {
        text: '@call mcp_everything_trigger_long_running_operation {"duration": 30, "steps": 30}',
      },
    });
    const runId = submitted.body.run_id as string;
    await waitFor('the call is in flight', async () =>
      (await traceOf('acme', runId)).some((event) => event.type === 'tool.call'),
    );
    const cancelled = await api('POST', `/v1/tenants/acme/runs/${runId}/cancel`, {});
    assert.equal(cancelled.status, 200, cancelled.text);
    const run = (await api('GET', `/v1/tenants/acme/runs/${runId}/wait?timeout_ms=60000`)).body.run;
    assert.equal(run.status, 'cancelled');
    const results = await toolResults(runId);
    assert.ok(
      results.every((result) => result.ok === false),
      JSON.stringify(results),
    );
    // The session survives the cancellation: the next call answers.
    const next = await turn(
      'acme',
      'a',
      '@call mcp_everything_echo {"message": "again"}',
      'cancel',
    );
    assert.equal((await toolResults(next.run_id))[0].ok, true);
  });

  it('a disabled server keeps its record but its tools leave the agent', async () => {
    const off = await api('PUT', '/v1/tenants/acme/mcp/everything', {
      enabled: false,
      transport: { type: 'stdio', server: 'everything' },
      allowed_tools: ['echo'],
    });
    assert.equal(off.status, 200, off.text);
    assert.equal(off.body.tools.length > 0, true, 'the last discovered tools are kept');
    const tools = (await api('GET', '/v1/tenants/acme/tools?agent=a')).body.tools as Loose[];
    assert.equal(
      tools.some((tool) => tool.name.startsWith('mcp_everything_')),
      false,
    );
    const on = await api('PUT', '/v1/tenants/acme/mcp/everything', {
      transport: { type: 'stdio', server: 'everything' },
      allowed_tools: ['echo', 'get-sum'],
    });
    assert.equal(on.status, 200, on.text);
    const again = (await api('GET', '/v1/tenants/acme/tools?agent=a')).body.tools as Loose[];
    assert.deepEqual(
      again.filter((tool) => tool.name.startsWith('mcp_everything_')).map((tool) => tool.name),
      ['mcp_everything_echo', 'mcp_everything_get_sum'],
    );
  });

  it('server-memory: an agent stores a fact in one turn and reads it back in the next', async () => {
    const put = await api('PUT', '/v1/tenants/acme/mcp/memory', {
      transport: { type: 'stdio', server: 'memory' },
      allowed_tools: ['create_entities', 'open_nodes'],
    });
    assert.equal(put.status, 201, put.text);
    const entity = { name: 'Rex', entityType: 'dog', observations: ['Rex is a golden retriever'] };
    const stored = await turn(
      'acme',
      'patient',
      `@call mcp_memory_create_entities ${JSON.stringify({ entities: [entity] })}`,
      'mem',
    );
    const [created] = await toolResults(stored.run_id);
    assert.equal(created.ok, true, JSON.stringify(created));
    const read = await turn(
      'acme',
      'patient',
      '@call mcp_memory_open_nodes {"names": ["Rex"]}',
      'mem',
    );
    const [result] = await toolResults(read.run_id);
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.match(JSON.stringify(result.result), /golden retriever/);
    assert.match(await readFile(memoryFile, 'utf8'), /golden retriever/);
  });

  it('a server that fails to start is a 400 with its error, and nothing is stored', async () => {
    const put = await api('PUT', '/v1/tenants/acme/mcp/broken', {
      transport: { type: 'stdio', server: 'broken' },
    });
    assert.equal(put.status, 400, put.text);
    assert.equal(put.body.error.code, 'MCP_SERVER_FAILED');
    assert.match(put.body.error.message, /cannot start: no config/);
    assert.equal((await api('GET', '/v1/tenants/acme/mcp/broken')).status, 404);
  });

  it('allowed_tools naming no discovered tool is a 400 naming it', async () => {
    const put = await api('PUT', '/v1/tenants/acme/mcp/ev2', {
      transport: { type: 'stdio', server: 'everything' },
      allowed_tools: ['ecko'],
    });
    assert.equal(put.status, 400, put.text);
    assert.match(put.body.error.message, /ecko/);
    assert.equal((await api('GET', '/v1/tenants/acme/mcp/ev2')).status, 404);
  });
});

describe('MCP servers per tenant (server-everything over streamable HTTP)', () => {
  it('a tenant registers its HTTP server; header values come from its secrets; tools answer', async () => {
    const secret = await api('PUT', '/v1/tenants/acme/secrets/http-token', {
      value: `Bearer ${SECRET_VALUE}`,
    });
    assert.equal(secret.status, 201, secret.text);
    const put = await api('PUT', '/v1/tenants/acme/mcp/remote', {
      transport: { type: 'http', url: proxyUrl, headers_from: { Authorization: 'http-token' } },
      allowed_tools: ['echo', 'get-sum'],
    });
    assert.equal(put.status, 201, put.text);
    assert.doesNotMatch(put.text, new RegExp(SECRET_VALUE));
    const [echo, sum] = await succeededCalls(
      [
        '@call mcp_remote_echo {"message": "over http"}',
        '@call mcp_remote_get_sum {"a": 1, "b": 2}',
      ],
      'http',
    );
    assert.match(JSON.stringify(echo.result), /over http/);
    assert.match(JSON.stringify(sum.result), /3/);
    assert.ok(authorizations.length > 0);
    assert.ok(
      authorizations.every((value) => value === `Bearer ${SECRET_VALUE}`),
      'every request carried the secret as its header',
    );
  });

  it('a private URL the operator did not allow is refused at PUT', async () => {
    for (const url of ['http://localhost:1/mcp', 'http://10.1.2.3/mcp', 'http://[::1]:1/mcp']) {
      const put = await api('PUT', '/v1/tenants/acme/mcp/inside', {
        enabled: false,
        transport: { type: 'http', url },
      });
      assert.equal(put.status, 400, `${url}: ${put.text}`);
      assert.match(put.body.error.message, /not a public address/);
    }
  });
});

describe('MCP security', () => {
  it('a tenant body with a command or args is refused', async () => {
    for (const transport of [
      { type: 'stdio', server: 'everything', command: '/bin/sh' },
      { type: 'stdio', command: '/bin/sh', args: ['-c', 'id'] },
    ]) {
      const put = await api('PUT', '/v1/tenants/acme/mcp/evil', { transport });
      assert.equal(put.status, 400, put.text);
      assert.match(put.body.error.message, /command/);
    }
    assert.equal((await api('GET', '/v1/tenants/acme/mcp/evil')).status, 404);
  });

  it('a tenant cannot attach a declared server not open to it (nor an undeclared one)', async () => {
    for (const server of ['private', 'nope']) {
      const put = await api('PUT', '/v1/tenants/acme/mcp/p', {
        transport: { type: 'stdio', server },
      });
      assert.equal(put.status, 400, put.text);
      assert.match(put.body.error.message, /no stdio MCP server/);
    }
    const other = await api('PUT', '/v1/tenants/other/mcp/p', {
      transport: { type: 'stdio', server: 'private' },
      allowed_tools: ['echo'],
    });
    assert.equal(other.status, 201, other.text);
  });

  it("tenant B sees neither A's servers nor its secrets, and cannot call A's tools", async () => {
    const secret = await api('PUT', '/v1/tenants/acme/secrets/notes-token', {
      value: SECRET_VALUE,
    });
    assert.equal(secret.status, 201, secret.text);
    assert.doesNotMatch(secret.text, new RegExp(SECRET_VALUE));
    const listed = await api('GET', '/v1/tenants/acme/secrets');
    assert.deepEqual(
      listed.body.secrets.map((s: Loose) => s.name),
      ['http-token', 'notes-token'],
    );
    assert.doesNotMatch(listed.text, new RegExp(SECRET_VALUE));

    assert.deepEqual((await api('GET', '/v1/tenants/other/secrets')).body.secrets, []);
    const otherServers = (await api('GET', '/v1/tenants/other/mcp')).body.servers;
    assert.deepEqual(
      otherServers.map((s: Loose) => s.name),
      ['p'],
    );
    assert.equal((await api('GET', '/v1/tenants/other/mcp/everything')).status, 404);

    const run = await turn('other', 'a', '@call mcp_everything_echo {"message": "x"}');
    const [result] = await toolResults(run.run_id, 'other');
    assert.equal(result.ok, false);
    assert.equal(result.error.code, 'TOOL_NOT_FOUND');
    const own = await turn('other', 'a', '@call mcp_p_echo {"message": "mine"}', 's2');
    assert.equal((await toolResults(own.run_id, 'other'))[0].ok, true);
  });

  it('headers_from naming an environment variable (no such secret) is refused', async () => {
    for (const name of ['KEEL_TEST_DECLARED', 'keel_test_declared']) {
      const put = await api('PUT', '/v1/tenants/acme/mcp/remote2', {
        enabled: false,
        transport: {
          type: 'http',
          url: 'https://example.com/mcp',
          headers_from: { Authorization: name },
        },
      });
      assert.equal(put.status, 400, put.text);
      assert.match(put.text, /headers_from/);
    }
    const put = await api('PUT', '/v1/tenants/other/mcp/remote2', {
      enabled: false,
      transport: {
        type: 'http',
        url: 'https://example.com/mcp',
        headers_from: { Authorization: 'http-token' },
      },
    });
    assert.equal(put.status, 400, "another tenant's secret is not this tenant's: " + put.text);
    assert.match(put.body.error.message, /no secret "http-token"/);
  });

  it('the secret value is in no log line and no trace event', async () => {
    const logs = logLines.join('');
    assert.ok(logs.length > 0, 'the test captured the logs');
    assert.equal(logs.includes(SECRET_VALUE), false);
    // Every request line is logged (level 30 and up at KEEL_LOG_LEVEL=debug), secrets' PUTs too.
    assert.match(logs, /secrets\/notes-token/, 'the secret PUT was logged (without its value)');
    console.log(`captured log: ${logs.length} characters, no secret value`);
    const runs = (await api('GET', '/v1/tenants/acme/runs?limit=200')).body.runs as Loose[];
    assert.ok(runs.length > 5);
    for (const run of runs) {
      const events = await traceOf('acme', run.run_id);
      assert.equal(JSON.stringify(events).includes(SECRET_VALUE), false);
    }
  });
});

describe('keel mcp / keel secrets (CLI against this keel)', () => {
  const ROOT = resolve(import.meta.dirname, '..');
  function keelCli(
    args: string[],
    stdin = '',
  ): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const env: NodeJS.ProcessEnv = {};
    for (const [key, value] of Object.entries(process.env)) {
      if (!key.startsWith('KEEL_')) env[key] = value;
    }
    return new Promise((done) => {
      const child = spawn(process.execPath, [...KEEL_CLI, ...args], {
        cwd: ROOT,
        env: { ...env, KEEL_URL: keel.url, KEEL_TENANT: 'other' },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      child.once('exit', (code) => done({ code, stdout, stderr }));
      child.stdin.end(stdin);
    });
  }

  it('secrets put (value on stdin) / list / rm; mcp put / list / tools / rm', async () => {
    const put = await keelCli(['secrets', 'put', 'cli-token'], `${SECRET_VALUE}\n`);
    assert.equal(put.code, 0, put.stderr);
    assert.equal(put.stdout, 'secret cli-token created\n');
    const listed = await keelCli(['secrets', 'list']);
    assert.match(listed.stdout, /^cli-token\t/);
    assert.equal(listed.stdout.includes(SECRET_VALUE), false);

    const attached = await keelCli([
      'mcp',
      'put',
      'cli-ev',
      '--server',
      'private',
      '--allow',
      'echo',
    ]);
    assert.equal(attached.code, 0, attached.stderr);
    assert.match(attached.stdout, /^mcp server cli-ev saved \(\d+ tools\)/);
    assert.match(attached.stdout, /mcp_cli-ev_echo|mcp_cli_ev_echo\tread_only\tallowed/);
    const servers = await keelCli(['mcp', 'list']);
    assert.match(servers.stdout, /^cli-ev\tenabled\tstdio:private\t\d+ tools/m);
    const tools = await keelCli(['mcp', 'tools', 'cli-ev']);
    assert.match(tools.stdout, /mcp_cli_ev_get_sum\tread_only\tnot allowed/);
    const refused = await keelCli(['mcp', 'put', 'x', '--server', 'undeclared']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /VALIDATION_FAILED: transport.server: no stdio MCP server/);
    assert.equal((await keelCli(['mcp', 'rm', 'cli-ev'])).stdout, 'mcp server cli-ev removed\n');
    assert.equal((await keelCli(['secrets', 'rm', 'cli-token'])).code, 0);
    assert.equal((await keelCli(['secrets', 'list'])).stdout, '');
  });
});
