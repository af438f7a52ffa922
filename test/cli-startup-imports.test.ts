// `keel --help` and the client commands must stay light: they answer in a few hundred
// milliseconds only because they never load the server (fastify, the stores' drivers,
// the runtime). A module hook (test/fixtures/record-imports.mjs) records every module
// the process resolves; the test asserts none of the server's is among them — and, as
// a control, that the same recorder does see them when the server is imported.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

const ROOT = new URL('..', import.meta.url).pathname;
const SERVER_MODULES = [
  /\/node_modules\/fastify\//,
  /\/node_modules\/better-sqlite3\//,
  /\/node_modules\/pg\//,
  /\/node_modules\/pino\//,
  /\/src\/api\//,
  /\/src\/store\//,
  /\/src\/runtime\//,
  /\/src\/main\.ts$/,
];

let dir: string;
let runs = 0;

async function importsOf(args: string[]): Promise<{ modules: string[]; stdout: string }> {
  runs += 1;
  const file = join(dir, `imports-${runs}.txt`);
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('KEEL_')) env[key] = value;
  }
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', './test/fixtures/record-imports.mjs', ...args],
    {
      cwd: ROOT,
      // Nothing listens on port 9 (discard): `runs list` fails fast after loading.
      env: { ...env, RECORD_IMPORTS_TO: file, KEEL_URL: 'http://127.0.0.1:9' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  await new Promise((resolve) => child.once('exit', resolve));
  const modules = (await readFile(file, 'utf8').catch(() => '')).split('\n').filter(Boolean);
  return { modules, stdout };
}

function serverModules(modules: string[]): string[] {
  return [...new Set(modules.filter((url) => SERVER_MODULES.some((re) => re.test(url))))];
}

describe('CLI start loads no server module', () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'keel-imports-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keel --help: usage printed, none of fastify, better-sqlite3, pg, pino, src/{api,store,runtime}', async () => {
    const { modules, stdout } = await importsOf(['src/cli/main.ts', '--help']);
    assert.match(stdout, /keel serve/);
    assert.ok(
      modules.some((url) => url.endsWith('/src/cli/main.ts')),
      'the recorder ran',
    );
    console.log(`keel --help resolved ${new Set(modules).size} modules`);
    assert.deepEqual(serverModules(modules), []);
  });

  it('keel runs list (a client command): no server module either', async () => {
    const { modules } = await importsOf(['src/cli/main.ts', 'runs', 'list']);
    assert.ok(
      modules.some((url) => url.endsWith('/src/cli/runs.ts')),
      'the recorder ran',
    );
    assert.deepEqual(serverModules(modules), []);
  });

  it('control: the recorder does see the server modules when they are imported', async () => {
    const { modules } = await importsOf([
      '--input-type=module',
      '-e',
      "await import('./src/api/app.ts'); await import('./src/store/sqlite/index.ts');",
    ]);
    const seen = serverModules(modules).join('\n');
    for (const name of ['fastify', 'better-sqlite3', 'src/api/', 'src/store/']) {
      assert.ok(seen.includes(name), `${name} recorded`);
    }
  });
});

// `keel serve` loads the server, but not what only some configurations use: the MCP SDK
// (~0.5 s of CPU under tsx) is imported on the first connect to an MCP server, pg and
// the PostgreSQL store only when store.url names PostgreSQL, undici (~0.3 s) on the
// first web fetch, web search or webhook POST.
describe('the server loads optional SDKs only when used', () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'keel-imports-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('importing src/main.ts loads fastify and the SQLite store, not @modelcontextprotocol/sdk, pg nor undici', async () => {
    const { modules } = await importsOf([
      '--input-type=module',
      '-e',
      "await import('./src/main.ts');",
    ]);
    assert.ok(
      serverModules(modules).some((url) => url.endsWith('/src/main.ts')),
      'the recorder ran',
    );
    assert.deepEqual(
      modules.filter((url) =>
        /\/node_modules\/(@modelcontextprotocol|pg|undici)\/|\/src\/store\/postgres\//.test(url),
      ),
      [],
    );
  });

  it('control: connecting to an MCP server loads the SDK', async () => {
    const { modules } = await importsOf([
      '--input-type=module',
      '-e',
      "const { openClient } = await import('./src/mcp/connect.ts'); await openClient({ settings: { stdio: {}, allow_hosts: [] }, secrets: { getSecretValue: async () => null } }, 't', { type: 'http', url: 'http://127.0.0.1:9/mcp' }).catch(() => undefined);",
    ]);
    assert.ok(modules.some((url) => url.includes('/node_modules/@modelcontextprotocol/sdk/')));
  });

  it('control: a web fetch loads undici', async () => {
    const { modules } = await importsOf([
      '--input-type=module',
      '-e',
      "const { createFetcher } = await import('./src/web/fetcher.ts'); await createFetcher({ allowHosts: ['127.0.0.1:9'] })('http://127.0.0.1:9/', new AbortController().signal).catch(() => undefined);",
    ]);
    assert.ok(modules.some((url) => url.includes('/node_modules/undici/')));
  });
});
