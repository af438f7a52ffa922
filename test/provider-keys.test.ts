// A provider that names `api_key_env` needs that variable set and non-empty where it is
// called: `keel serve` refuses to start without it (CONFIG_INVALID naming the provider
// and the variable, exit 1, before the store is opened), a provider without api_key_env
// (Ollama) starts; an API process needs only the memory embedder's provider key, a
// worker every key; `keel migrate` needs no key, `keel memory reindex` only the
// embedder's. In-process startKeel on real SQLite / PostgreSQL, and real child processes.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { isKeelError } from '../src/errors.ts';
import type { KeelOptions } from '../src/main.ts';
import { startKeel } from '../src/main.ts';
import {
  dropSchemas,
  freshSchemaName,
  skipUnlessPostgres,
  urlWithSchema,
} from './helpers/postgres.ts';
import { KEEL_CLI } from './helpers/keel-cli.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const dirs: string[] = [];
const schemas: string[] = [];
after(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await dropSchemas(schemas);
});

const OPENAI = '[providers.openai]\ntype = "openai"\napi_key_env = "KEEL_KEYS_TEST_OPENAI"';
const OLLAMA =
  '[providers.ollama]\ntype = "openai-compatible"\nbase_url = "http://127.0.0.1:11434/v1"';
const EMBEDDER =
  '[providers.emb]\ntype = "openai-compatible"\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = "KEEL_KEYS_TEST_EMB"\n[memory]\nembedder = "openai:emb/e5"';
const MISSING = /providers\.openai\.api_key_env: KEEL_KEYS_TEST_OPENAI is not set or is empty/;

function project(toml: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'keel-keys-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'keel.toml'), toml);
  return dir;
}

/** startKeel on `toml` with `env`; the error it refused with, or null once it served. */
async function startOutcome(
  toml: string,
  env: NodeJS.ProcessEnv,
  options: KeelOptions & { storeUrl?: string } = {},
): Promise<unknown> {
  const dir = project(toml);
  const config = loadConfig(
    {
      data_dir: dir,
      listen: '127.0.0.1:0',
      ...(options.storeUrl && { store_url: options.storeUrl }),
    },
    env,
    dir,
  );
  try {
    const keel = await startKeel(config, { logger: pino({ level: 'silent' }), ...options });
    await keel.stop();
    return null;
  } catch (error) {
    // Refused before touching any data: no database was created.
    assert.equal(existsSync(join(dir, 'keel.db')), false, 'the store was opened');
    return error;
  }
}

function refusedMissing(error: unknown, pattern: RegExp = MISSING): void {
  assert.ok(isKeelError(error, 'CONFIG_INVALID'), `expected CONFIG_INVALID, got ${String(error)}`);
  assert.match(error.message, pattern);
}

describe('provider keys at start', () => {
  it('keel serve (startKeel) refuses a provider whose api_key_env is unset or empty, before opening the store', async () => {
    refusedMissing(await startOutcome(`${OPENAI}\n${OLLAMA}`, {}));
    refusedMissing(await startOutcome(`${OPENAI}\n${OLLAMA}`, { KEEL_KEYS_TEST_OPENAI: '' }));
    // Set, it starts; a provider without api_key_env (Ollama) never needs one.
    assert.equal(
      await startOutcome(`${OPENAI}\n${OLLAMA}`, { KEEL_KEYS_TEST_OPENAI: 'sk-x' }),
      null,
    );
    assert.equal(await startOutcome(OLLAMA, {}), null);
    // The memory embedder's provider is called too.
    refusedMissing(
      await startOutcome(EMBEDDER, {}),
      /providers\.emb\.api_key_env: KEEL_KEYS_TEST_EMB/,
    );
  });

  it('[postgres] an API process needs only the embedder key; a worker needs every key', async (t) => {
    const skip = await skipUnlessPostgres('test/provider-keys.test.ts');
    if (skip) return t.skip(skip);
    const schema = freshSchemaName('keel_keys');
    schemas.push(schema);
    const storeUrl = urlWithSchema(schema);
    assert.equal(await startOutcome(OPENAI, {}, { role: 'api', storeUrl }), null);
    refusedMissing(await startOutcome(OPENAI, {}, { role: 'worker', storeUrl }));
    refusedMissing(
      await startOutcome(EMBEDDER, {}, { role: 'api', storeUrl }),
      /providers\.emb\.api_key_env/,
    );
  });

  it('the keel command: serve exits 1 naming the provider and variable; migrate needs no key; memory reindex needs the embedder key', async () => {
    const run = (args: string[], toml: string) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const dir = project(toml);
        const env = Object.fromEntries(
          Object.entries(process.env).filter(([key]) => !key.startsWith('KEEL_')),
        );
        const child = spawn(
          process.execPath,
          [...KEEL_CLI, ...args, '--config', join(dir, 'keel.toml')],
          { cwd: ROOT, env: { ...env, KEEL_DATA_DIR: dir }, stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          // A serve that started is a failure here; it must not outlive the test.
          if (/keel listening on/.test(stdout)) child.kill('SIGKILL');
        });
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.once('close', (code) => resolve({ code, stdout, stderr }));
      });
    const [serve, migrate, reindex] = await Promise.all([
      run(['serve', '--listen', '127.0.0.1:0'], `${OPENAI}\n${OLLAMA}`),
      run(['migrate'], `${OPENAI}\n${EMBEDDER}`),
      run(['memory', 'reindex'], `${OPENAI}\n${EMBEDDER}`),
    ]);
    assert.equal(serve.code, 1, serve.stdout + serve.stderr);
    assert.match(serve.stderr, /^keel: CONFIG_INVALID: providers\.openai\.api_key_env: KEEL_KEYS/m);
    assert.doesNotMatch(serve.stdout, /listening/);
    assert.equal(migrate.code, 0, migrate.stderr);
    assert.match(migrate.stdout, /schema version/);
    assert.equal(reindex.code, 1, reindex.stdout + reindex.stderr);
    // Only the embedder's provider is checked: openai's missing key is not named.
    assert.match(reindex.stderr, /CONFIG_INVALID: providers\.emb\.api_key_env: KEEL_KEYS_TEST_EMB/);
    assert.doesNotMatch(reindex.stderr, /providers\.openai/);
  });
});
