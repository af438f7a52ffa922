// Config: precedence flags > env > keel.toml > defaults, unknown keys named, listen
// validation, provider timeouts and keys, a frozen result.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadConfig, parseListen } from '../src/config.ts';
import { isKeelError } from '../src/errors.ts';
import { assertProviderKeys } from '../src/providers/provider-keys.ts';

const dirs: string[] = [];
function project(toml?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'keel-config-'));
  dirs.push(dir);
  if (toml !== undefined) writeFileSync(join(dir, 'keel.toml'), toml);
  return dir;
}

function configError(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(
      isKeelError(error, 'CONFIG_INVALID'),
      `expected CONFIG_INVALID, got ${String(error)}`,
    );
    assert.match(error.message, pattern);
    return true;
  });
}

describe('config', () => {
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('defaults', () => {
    const cwd = project();
    const config = loadConfig({}, {}, cwd);
    assert.deepEqual(config.listen, { host: '127.0.0.1', port: 8080 });
    assert.equal(config.data_dir, join(cwd, '.keel'));
    assert.equal(config.store.url, `sqlite:${join(cwd, '.keel', 'keel.db')}`);
    assert.equal(config.store.durability, 'full');
    assert.deepEqual(config.workers, { concurrency: 8, lease_ms: 30_000, max_attempts: 5 });
    assert.equal(config.admin_token, null);
    assert.equal(config.log.level, 'info');
  });

  it('[tenant_limits]: the default running cap binds only with other tenants; storage quotas', () => {
    const defaults = loadConfig({}, {}, project()).tenant_limits;
    assert.equal(defaults.running_runs, 6);
    assert.equal(
      defaults.running_runs_when_alone,
      false,
      'the default cap leaves one tenant alone',
    );
    assert.equal(defaults.memory_bytes, 256 * 1024 * 1024);
    assert.equal(defaults.artifact_bytes, 1024 * 1024 * 1024);
    const set = loadConfig(
      {},
      {},
      project('[tenant_limits]\nrunning_runs = 3\nmemory_bytes = 1000\nartifact_bytes = 0\n'),
    ).tenant_limits;
    assert.equal(set.running_runs, 3);
    assert.equal(set.running_runs_when_alone, true, "an operator's cap binds always");
    assert.equal(set.memory_bytes, 1000);
    assert.equal(set.artifact_bytes, 0);
    configError(
      () => loadConfig({}, {}, project('[tenant_limits]\nmemory_bytes = -1\n')),
      /tenant_limits\.memory_bytes/,
    );
  });

  it('[http] max_connections_per_address: a quarter of max_connections unless set, never above it', () => {
    assert.equal(loadConfig({}, {}, project()).http.max_connections_per_address, 256);
    assert.equal(
      loadConfig({}, {}, project('[http]\nmax_connections = 100\n')).http
        .max_connections_per_address,
      25,
    );
    assert.equal(
      loadConfig({}, {}, project('[http]\nmax_connections_per_address = 1000\n')).http
        .max_connections_per_address,
      1000,
    );
    configError(
      () =>
        loadConfig(
          {},
          {},
          project('[http]\nmax_connections = 10\nmax_connections_per_address = 11\n'),
        ),
      /^http\.max_connections_per_address: must not exceed http\.max_connections/,
    );
  });

  it('precedence: flags > env > keel.toml > defaults', () => {
    const cwd = project(
      [
        'listen = "127.0.0.1:1111"',
        'data_dir = "from-toml"',
        '[store]',
        'url = "sqlite:toml.db"',
      ].join('\n'),
    );
    const env = {
      KEEL_LISTEN: '127.0.0.1:2222',
      KEEL_DATA_DIR: 'from-env',
      KEEL_STORE_URL: 'sqlite:env.db',
    };
    const flags = { listen: '127.0.0.1:3333', data_dir: 'from-flag', store_url: 'sqlite:flag.db' };

    const fromFlags = loadConfig(flags, env, cwd);
    assert.equal(fromFlags.listen.port, 3333);
    assert.equal(fromFlags.data_dir, join(cwd, 'from-flag'));
    assert.equal(fromFlags.store.url, `sqlite:${join(cwd, 'flag.db')}`);

    const fromEnv = loadConfig({}, env, cwd);
    assert.equal(fromEnv.listen.port, 2222);
    assert.equal(fromEnv.data_dir, join(cwd, 'from-env'));
    assert.equal(fromEnv.store.url, `sqlite:${join(cwd, 'env.db')}`);

    const fromToml = loadConfig({}, {}, cwd);
    assert.equal(fromToml.listen.port, 1111);
    assert.equal(fromToml.data_dir, join(cwd, 'from-toml'));
    assert.equal(fromToml.store.url, `sqlite:${join(cwd, 'toml.db')}`);
  });

  it('the store url follows --data-dir unless set itself', () => {
    const cwd = project();
    const config = loadConfig({ data_dir: 'elsewhere' }, {}, cwd);
    assert.equal(config.store.url, `sqlite:${join(cwd, 'elsewhere', 'keel.db')}`);
  });

  it('--config and KEEL_CONFIG choose the file', () => {
    const cwd = project('listen = "127.0.0.1:1111"');
    writeFileSync(join(cwd, 'other.toml'), 'listen = "127.0.0.1:4444"');
    writeFileSync(join(cwd, 'third.toml'), 'listen = "127.0.0.1:5555"');
    assert.equal(loadConfig({ config: 'other.toml' }, {}, cwd).listen.port, 4444);
    assert.equal(loadConfig({}, { KEEL_CONFIG: 'third.toml' }, cwd).listen.port, 5555);
    assert.equal(
      loadConfig({ config: 'other.toml' }, { KEEL_CONFIG: 'third.toml' }, cwd).listen.port,
      4444,
    );
  });

  it('an unknown key is an error naming the key, nested ones too', () => {
    configError(() => loadConfig({}, {}, project('bogus = 1')), /unknown key "bogus"/);
    configError(
      () => loadConfig({}, {}, project('[store]\nfoo = "x"')),
      /unknown key "store\.foo"/,
    );
    configError(
      () => loadConfig({}, {}, project('[workers]\nconcurrency = 0')),
      /workers\.concurrency/,
    );
    configError(() => loadConfig({}, {}, project('listen = [')), /keel\.toml/);
  });

  it('memory.search_threads: null by default (the store decides), 0–64 when set', () => {
    assert.equal(loadConfig({}, {}, project()).memory.search_threads, null);
    assert.equal(
      loadConfig({}, {}, project('[memory]\nsearch_threads = 0')).memory.search_threads,
      0,
    );
    configError(
      () => loadConfig({}, {}, project('[memory]\nsearch_threads = -1')),
      /memory\.search_threads/,
    );
    configError(
      () => loadConfig({}, {}, project('[memory]\nsearch_threads = 2.5')),
      /memory\.search_threads/,
    );
  });

  it('[wasm]: pool_size defaults to the cores (1–4), the share per tenant to half the pool', () => {
    const defaults = loadConfig({}, {}, project()).wasm;
    assert.ok(defaults.pool_size >= 1 && defaults.pool_size <= 4);
    assert.equal(defaults.max_workers_per_tenant, Math.ceil(defaults.pool_size / 2));
    assert.deepEqual(loadConfig({}, {}, project('[wasm]\npool_size = 5')).wasm, {
      pool_size: 5,
      max_workers_per_tenant: 3,
    });
    configError(
      () => loadConfig({}, {}, project('[wasm]\npool_size = 2\nmax_workers_per_tenant = 3')),
      /wasm\.max_workers_per_tenant: 3 is more than wasm\.pool_size \(2\)/,
    );
    configError(() => loadConfig({}, {}, project('[wasm]\npool_size = 0')), /wasm\.pool_size/);
  });

  it('bad listen values are rejected', () => {
    for (const value of ['nope', '127.0.0.1', '127.0.0.1:99999', ':80', '127.0.0.1:http']) {
      configError(() => parseListen(value), /listen/);
    }
    configError(() => loadConfig({ listen: 'bad' }, {}, project()), /listen/);
    assert.deepEqual(parseListen('[::1]:9000'), { host: '::1', port: 9000 });
    assert.deepEqual(parseListen('localhost:0'), { host: 'localhost', port: 0 });
  });

  it('other validation: short admin token, built-in provider name, store url scheme', () => {
    configError(() => loadConfig({}, { KEEL_ADMIN_TOKEN: 'short' }, project()), /16 characters/);
    configError(
      () => loadConfig({}, {}, project('[providers.fixture]\ntype = "openai"')),
      /built in/,
    );
    configError(() => loadConfig({ store_url: 'mysql://x' }, {}, project()), /store\.url/);
    const token = 'a'.repeat(24);
    assert.equal(loadConfig({}, { KEEL_ADMIN_TOKEN: token }, project()).admin_token, token);
  });

  it('providers.*.stream: true, false or "when-watched"; anything else is named', () => {
    const provider = (stream: string) =>
      `[providers.local]\ntype = "openai-compatible"\nbase_url = "http://127.0.0.1:1/v1"\nstream = ${stream}`;
    assert.equal(
      loadConfig({}, {}, project(provider('"when-watched"'))).providers.local?.stream,
      'when-watched',
    );
    assert.equal(loadConfig({}, {}, project(provider('false'))).providers.local?.stream, false);
    configError(
      () => loadConfig({}, {}, project(provider('"sometimes"'))),
      /providers\.local\.stream: expected true, false or "when-watched"/,
    );
  });

  it('providers.*.timeout_ms: 1000–3600000 when set, named when not; unset leaves the default to the providers', () => {
    const provider = (line: string) =>
      `[providers.local]\ntype = "openai-compatible"\nbase_url = "http://127.0.0.1:1/v1"\n${line}`;
    assert.equal(loadConfig({}, {}, project(provider(''))).providers.local?.timeout_ms, undefined);
    for (const ms of [1000, 3_600_000]) {
      const config = loadConfig({}, {}, project(provider(`timeout_ms = ${ms}`)));
      assert.equal(config.providers.local?.timeout_ms, ms);
    }
    for (const bad of ['999', '3600001', '1500.5', '"60s"']) {
      configError(
        () => loadConfig({}, {}, project(provider(`timeout_ms = ${bad}`))),
        /providers\.local\.timeout_ms/,
      );
    }
  });

  it('provider keys: read from the variable api_key_env names; unset or empty is no key, and keel serve is refused naming the provider and the variable', () => {
    const cwd = project(
      [
        '[providers.openai]\ntype = "openai"\napi_key_env = "OPENAI_API_KEY"',
        '[providers.claude]\ntype = "anthropic"\napi_key_env = "ANTHROPIC_API_KEY"',
        '[providers.ollama]\ntype = "openai-compatible"\nbase_url = "http://127.0.0.1:11434/v1"',
      ].join('\n'),
    );
    const all = ['openai', 'claude', 'ollama'];
    const set = loadConfig({}, { OPENAI_API_KEY: 'sk-1', ANTHROPIC_API_KEY: 'sk-2' }, cwd);
    assert.deepEqual(set.provider_keys, { openai: 'sk-1', claude: 'sk-2', ollama: undefined });
    // A provider without api_key_env (a local server) needs no key.
    assertProviderKeys(set.providers, set.provider_keys, all);

    const missing = loadConfig({}, { OPENAI_API_KEY: '' }, cwd);
    assert.deepEqual(missing.provider_keys, {
      openai: undefined,
      claude: undefined,
      ollama: undefined,
    });
    configError(
      () => assertProviderKeys(missing.providers, missing.provider_keys, all),
      /^providers\.openai\.api_key_env: OPENAI_API_KEY is not set or is empty; providers\.claude\.api_key_env: ANTHROPIC_API_KEY is not set or is empty \(set it/,
    );
    // Only the providers a process needs are checked (an API process: none of them).
    assertProviderKeys(missing.providers, missing.provider_keys, ['ollama']);
    assertProviderKeys(missing.providers, missing.provider_keys, []);
  });

  it('the result is frozen, deeply', () => {
    const config = loadConfig({}, {}, project('[providers.local]\ntype = "openai-compatible"'));
    assert.ok(Object.isFrozen(config));
    assert.ok(Object.isFrozen(config.workers));
    assert.ok(Object.isFrozen(config.providers.local));
    assert.throws(() => {
      (config.workers as { concurrency: number }).concurrency = 99;
    }, TypeError);
    assert.equal(config.workers.concurrency, 8);
  });
});
