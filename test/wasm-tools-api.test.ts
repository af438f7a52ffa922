// WebAssembly tools through a whole keel on loopback HTTP (SQLite): registration and its
// refusals (4xx naming the field, nothing stored, server up), the tools in T/tools and
// in runs driven by the fixture model's `@call wasm_…` lines (envelope, idempotency key,
// each hostile module's code as the model sees it), module_artifact, DELETE, and tenant
// isolation; `keel wasm put|list|rm` through bin/keel.js.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import type { TestKeel } from './helpers/keel-server.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import type { WatName } from './helpers/wasm-modules.ts';
import { buildModules } from './helpers/wasm-modules.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

let keel: TestKeel;
let modules: Record<WatName, Uint8Array>;

async function api(method: string, path: string, body?: unknown, type = 'application/json') {
  const response = await fetch(`${keel.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': type },
    ...(body === undefined
      ? {}
      : { body: body instanceof Uint8Array ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Loose) : null, text };
}

function manifest(name: WatName, extra: Record<string, unknown> = {}) {
  return {
    description: `test module ${name}`,
    input_schema: { type: 'object', properties: { n: { type: 'number' } } },
    effect: 'idempotent',
    timeout_ms: 500,
    memory_limit_mb: 16,
    module_base64: Buffer.from(modules[name]).toString('base64'),
    ...extra,
  };
}

/** One turn of `tenant`'s agent `a` making `calls`; the run and its tool results. */
async function runCalls(tenant: string, calls: string[], scope = 's1') {
  const submitted = await api('POST', `/v1/tenants/${tenant}/turns`, {
    agent: 'a',
    scope,
    payload: { text: calls.join('\n') },
  });
  assert.equal(submitted.status, 202, submitted.text);
  const runId = submitted.body.run_id as string;
  const waited = await api('GET', `/v1/tenants/${tenant}/runs/${runId}/wait?timeout_ms=60000`);
  const trace = await api('GET', `/v1/tenants/${tenant}/runs/${runId}/trace?limit=1000`);
  const results = (trace.body.events as Loose[])
    .filter((event) => event.type === 'tool.result')
    .map((event) => event.data);
  return { run: waited.body.run, results };
}

before(async () => {
  modules = await buildModules();
  keel = await startTestKeel();
  for (const tenant of ['acme', 'other']) {
    assert.equal((await api('POST', '/v1/tenants', { name: tenant })).status, 201);
    const agent = await api('PUT', `/v1/tenants/${tenant}/agents/a`, {
      model: 'fixture/echo',
      allowed_families: ['wasm'],
      tool_timeout_ms: 10_000,
      max_steps: 20,
    });
    assert.equal(agent.status, 201, agent.text);
  }
});

after(async () => {
  await keel?.close();
});

describe('registration', () => {
  it('PUT stores a checked module; GET shows the manifest, T/tools the tool', async () => {
    const put = await api('PUT', '/v1/tenants/acme/wasm-tools/echo', manifest('echo'));
    assert.equal(put.status, 201, put.text);
    assert.equal(put.body.tool, 'wasm_echo');
    assert.equal(put.body.max_output_bytes, 1_048_576, 'default');
    assert.match(put.body.sha256, /^[0-9a-f]{64}$/);
    const again = await api('PUT', '/v1/tenants/acme/wasm-tools/echo', manifest('echo'));
    assert.equal(again.status, 200);
    const got = await api('GET', '/v1/tenants/acme/wasm-tools/echo');
    assert.equal(got.status, 200);
    assert.equal(got.body.module_base64, undefined, 'the module is never returned');
    assert.deepEqual(got.body.input_schema, manifest('echo').input_schema);
    const tools = await api('GET', '/v1/tenants/acme/tools?agent=a');
    const listed = (tools.body.tools as Loose[]).find((tool) => tool.name === 'wasm_echo');
    assert.deepEqual(
      { family: listed.family, effect: listed.effect, schema: listed.input_schema },
      { family: 'wasm', effect: 'idempotent', schema: manifest('echo').input_schema },
    );
  });

  it('refuses bad modules and bad manifests with a 4xx naming the field; nothing stored', async () => {
    const cases: [string, Record<string, unknown>, number, string, RegExp][] = [
      ['foreign', manifest('foreignImport'), 400, 'WASM_MODULE_INVALID', /env\.foo/],
      ['reactor', manifest('reactor'), 400, 'WASM_MODULE_INVALID', /_start/],
      [
        'notwasm',
        { ...manifest('echo'), module_base64: Buffer.from('hello').toString('base64') },
        400,
        'WASM_MODULE_INVALID',
        /compile/,
      ],
      ['b64', { ...manifest('echo'), module_base64: '%%%' }, 400, 'VALIDATION_FAILED', /base64/],
      [
        'both',
        { ...manifest('echo'), module_artifact: 'x.wasm' },
        400,
        'VALIDATION_FAILED',
        /exactly one/,
      ],
      [
        'schema',
        { ...manifest('echo'), input_schema: { type: 'string' } },
        400,
        'VALIDATION_FAILED',
        /input_schema/,
      ],
      ['effect', { ...manifest('echo'), effect: 'maybe' }, 400, 'VALIDATION_FAILED', /effect/],
      ['extra', { ...manifest('echo'), command: 'sh' }, 400, 'UNKNOWN_FIELD', /command/],
      [
        'big',
        { ...manifest('echo'), memory_limit_mb: 4096 },
        400,
        'VALIDATION_FAILED',
        /memory_limit_mb/,
      ],
      [
        'noartifact',
        { ...manifest('echo'), module_base64: undefined, module_artifact: 'nope.wasm' },
        404,
        'ARTIFACT_NOT_FOUND',
        /nope\.wasm/,
      ],
      ['Bad-Name', manifest('echo'), 400, 'VALIDATION_FAILED', /name/],
    ];
    for (const [name, body, status, code, message] of cases) {
      const put = await api('PUT', `/v1/tenants/acme/wasm-tools/${name}`, body);
      assert.equal(put.status, status, `${name}: ${put.text}`);
      assert.equal(put.body.error.code, code, `${name}: ${put.text}`);
      assert.match(JSON.stringify(put.body.error), message, name);
      assert.equal(
        (await api('GET', `/v1/tenants/acme/wasm-tools/${name}`)).status,
        name === 'Bad-Name' ? 400 : 404,
      );
    }
    const listed = await api('GET', '/v1/tenants/acme/wasm-tools');
    assert.deepEqual(
      (listed.body.tools as Loose[]).map((tool) => tool.name),
      ['echo'],
    );
    assert.equal(
      (await api('PUT', '/v1/tenants/nobody/wasm-tools/echo', manifest('echo'))).status,
      404,
    );
  });

  it('takes the module from an artifact of the tenant', async () => {
    const stored = await api(
      'PUT',
      '/v1/tenants/acme/artifacts/tools/trivial.wasm',
      modules.trivial,
      'application/wasm',
    );
    assert.equal(stored.status, 201, stored.text);
    const body = {
      ...manifest('trivial'),
      module_base64: undefined,
      module_artifact: 'tools/trivial.wasm',
    };
    const put = await api('PUT', '/v1/tenants/acme/wasm-tools/trivial', body);
    assert.equal(put.status, 201, put.text);
    // Another tenant cannot name acme's artifact.
    const other = await api('PUT', '/v1/tenants/other/wasm-tools/trivial', body);
    assert.equal(other.status, 404, other.text);
  });
});

describe('calls in runs', () => {
  it('the module reads {arguments, idempotency_key} and its JSON is the result', async () => {
    const { run, results } = await runCalls('acme', [
      '@call wasm_echo {"n": 7}',
      '@call wasm_trivial {}',
      '@call wasm_echo {"n": "seven"}',
    ]);
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    const [echo, trivial, invalid] = results as Loose[];
    assert.equal(echo.ok, true, JSON.stringify(echo));
    assert.deepEqual(echo.result.arguments, { n: 7 });
    assert.equal(echo.result.idempotency_key, `${run.run_id}:${echo.call_id}`);
    assert.deepEqual(trivial.result, { ok: 1 });
    assert.equal(invalid.ok, false);
    assert.equal(invalid.error.code, 'INVALID_ARGUMENTS');
  });

  it('each hostile module is an error result with its own code; the run goes on', async () => {
    const hostile: [WatName, string][] = [
      ['unreachable', 'WASM_TRAP'],
      ['exit3', 'WASM_EXIT_NONZERO'],
      ['garbage', 'WASM_BAD_OUTPUT'],
      ['flood', 'WASM_OUTPUT_TOO_LARGE'],
      ['grow', 'WASM_MEMORY_LIMIT'],
      ['growNoMax', 'WASM_MEMORY_LIMIT'],
      ['loop', 'WASM_TIMEOUT'],
      ['sleep', 'WASM_TIMEOUT'],
    ];
    for (const [name] of hostile) {
      const put = await api(
        'PUT',
        `/v1/tenants/acme/wasm-tools/${name.toLowerCase()}`,
        manifest(name),
      );
      assert.equal(put.status, 201, put.text);
    }
    const { run, results } = await runCalls('acme', [
      ...hostile.map(([name]) => `@call wasm_${name.toLowerCase()} {}`),
      '@call wasm_echo {"n": 1}',
    ]);
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    const codes = (results as Loose[]).map((result) => (result.ok ? 'ok' : result.error.code));
    console.log(`codes the model saw: ${codes.join(', ')}`);
    assert.deepEqual(codes, [...hostile.map(([, code]) => code), 'ok']);
  });

  it('DELETE removes the tool; another tenant never sees or calls it', async () => {
    const otherList = await api('GET', '/v1/tenants/other/wasm-tools');
    assert.deepEqual(otherList.body.tools, []);
    assert.equal((await api('GET', '/v1/tenants/other/wasm-tools/echo')).status, 404);
    const otherTools = await api('GET', '/v1/tenants/other/tools');
    assert.ok(!(otherTools.body.tools as Loose[]).some((tool) => tool.family === 'wasm'));
    const called = await runCalls('other', ['@call wasm_echo {"n": 1}']);
    assert.equal(called.results[0].error.code, 'TOOL_NOT_FOUND');
    assert.equal((await api('DELETE', '/v1/tenants/other/wasm-tools/echo')).status, 404);
    const deleted = await api('DELETE', '/v1/tenants/acme/wasm-tools/echo');
    assert.deepEqual(deleted.body, { deleted: true });
    assert.equal((await api('GET', '/v1/tenants/acme/wasm-tools/echo')).status, 404);
    const gone = await runCalls('acme', ['@call wasm_echo {"n": 1}'], 's2');
    assert.equal(gone.results[0].error.code, 'TOOL_NOT_FOUND');
  });
});

describe('keel wasm (CLI)', () => {
  const cli = async (...args: string[]) => {
    const env: NodeJS.ProcessEnv = {};
    for (const [key, value] of Object.entries(process.env)) {
      if (!key.startsWith('KEEL_')) env[key] = value;
    }
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [new URL('../bin/keel.js', import.meta.url).pathname, 'wasm', ...args],
        { env: { ...env, KEEL_URL: keel.url, KEEL_TENANT: 'other' } },
      );
      return { code: 0, stdout };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout + failed.stderr };
    }
  };

  it('put, list and rm a module file; a bad module is the API error, exit non-zero', async () => {
    const file = join(keel.dir, 'trivial.wasm');
    await writeFile(file, modules.trivial);
    const put = await cli(
      'put',
      'trivial',
      '--module',
      file,
      '--effect',
      'read_only',
      '--description',
      'answers ok',
      '--timeout-ms',
      '1000',
    );
    assert.equal(put.code, 0, put.stdout);
    assert.match(put.stdout, /wasm tool wasm_trivial saved \(229 bytes/);
    const listed = await cli('list');
    assert.match(
      listed.stdout,
      /^wasm_trivial\tread_only\t229 bytes\t1000 ms\t64 MiB\tanswers ok$/m,
    );
    const bad = join(keel.dir, 'foreign.wasm');
    await writeFile(bad, modules.foreignImport);
    const refused = await cli(
      'put',
      'bad',
      '--module',
      bad,
      '--effect',
      'read_only',
      '--description',
      'x',
    );
    assert.notEqual(refused.code, 0);
    assert.match(refused.stdout, /WASM_MODULE_INVALID/);
    assert.equal((await cli('rm', 'trivial')).code, 0);
    assert.equal((await api('GET', '/v1/tenants/other/wasm-tools/trivial')).status, 404);
  });
});
