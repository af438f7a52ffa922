// `keel export` / `keel import` (docs/operations.md, "Moving a tenant"): a tenant built
// through the HTTP API of a keel on a real SQLite data dir — a three-turn conversation,
// memory facts with their vectors, a binary artifact, a schedule, a secret, a token, a
// WebAssembly tool, a webhook — is
// exported by the real CLI (a child process) while that keel still runs, imported into a
// fresh PostgreSQL schema, and a keel started on PostgreSQL serves all of it: the next
// turn in the same scope carries the earlier conversation to the model. And: an import
// with one corrupt line, or into a store where the tenant exists, writes nothing; an
// export while a run is in flight is refused.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { createKeelClient } from '../src/client/index.ts';
import type { TestKeel } from './helpers/keel-server.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import { buildModules } from './helpers/wasm-modules.ts';
import {
  dropSchemas,
  freshSchemaName,
  POSTGRES_URL,
  skipUnlessPostgres,
} from './helpers/postgres.ts';
import { KEEL_CLI } from './helpers/keel-cli.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const skip = await skipUnlessPostgres('tenant-export.test.ts');
const TENANT = 'mover';
const TOML = '[memory]\nembedder = "hash"\n[webhooks]\nallow_hosts = ["127.0.0.1"]\n';
const schemas = [
  freshSchemaName('keel_export'),
  freshSchemaName('keel_export_bad'),
  freshSchemaName('keel_export_active'),
  freshSchemaName('keel_export_pg_source'),
];
const [targetSchema = '', corruptSchema = '', activeSchema = '', pgSourceSchema = ''] = schemas;
const work = mkdtempSync(join(tmpdir(), 'keel-export-'));
after(async () => {
  rmSync(work, { recursive: true, force: true });
  if (!skip) await dropSchemas(schemas);
});

function pgUrl(schema: string): string {
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('schema', schema);
  return url.toString();
}

function keel(...args: string[]): { code: number | null; out: string } {
  const result = spawnSync(process.execPath, [...KEEL_CLI, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: result.status, out: `${result.stdout}${result.stderr}` };
}

async function countRows(schema: string, table: string): Promise<number> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const result = await client.query<{ n: string }>(
      `SELECT count(*) AS n FROM "${schema}".${table}`,
    );
    return Number(result.rows[0]?.n);
  } finally {
    await client.end();
  }
}

async function usageOn(schema: string): Promise<unknown> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const result = await client.query<{ memory_bytes: string; artifact_bytes: string }>(
      `SELECT memory_bytes, artifact_bytes FROM "${schema}".tenant_usage WHERE tenant = $1`,
      [TENANT],
    );
    const row = result.rows[0];
    return (
      row && { memory_bytes: Number(row.memory_bytes), artifact_bytes: Number(row.artifact_bytes) }
    );
  } finally {
    await client.end();
  }
}

// Not valid UTF-8 on purpose: bytes must survive as bytes.
const ARTIFACT = Buffer.from([0xff, 0x00, 0xfe, 0x41, 0x80, 0x0a, 0xc3]);

describe('keel export / keel import --help', () => {
  it('says what the file holds and when nothing is written', () => {
    const exportHelp = keel('export', '--help');
    assert.equal(exportHelp.code, 0, exportHelp.out);
    assert.match(exportHelp.out, /usage: keel export TENANT --out FILE \[--include-active\]/);
    assert.match(exportHelp.out, /secret values: it is created with mode 0600/);
    const importHelp = keel('import', '--help');
    assert.equal(importHelp.code, 0, importHelp.out);
    assert.match(importHelp.out, /in one transaction: nothing is written when a line is invalid/);
    const usage = keel('import');
    assert.equal(usage.code, 2, usage.out);
  });
});

describe('keel export / keel import, SQLite to PostgreSQL', { skip }, () => {
  let source: TestKeel;
  let token = '';
  let file = '';
  const before3: {
    input3: number;
    runIds: string[];
    thread: unknown;
    schedule: unknown;
    wasm: unknown;
    webhooks: unknown;
  } = { input3: 0, runIds: [], thread: null, schedule: null, wasm: null, webhooks: null };

  before(async () => {
    source = await startTestKeel({ toml: TOML });
    const client = createKeelClient({ baseUrl: source.url });
    await client.tenants.create({ name: TENANT });
    await client.agents.put(TENANT, 'helper', { model: 'fixture/echo' });
    for (const text of ['my name is Ada', 'I like owls', 'what is my name?']) {
      const submitted = await client.turns.submit(TENANT, {
        agent: 'helper',
        scope: 'chat',
        payload: { text },
      });
      const waited = await client.turns.wait(TENANT, submitted.run_id, 20_000);
      assert.equal(waited.run.status, 'succeeded');
      before3.runIds.push(submitted.run_id);
      before3.input3 = waited.run.usage.input_tokens;
    }
    await client.memory.put(TENANT, 'notes', 'owls', { text: 'Ada likes owls' });
    await client.memory.put(TENANT, 'notes', 'name', { text: 'the user is called Ada' });
    await client.artifacts.put(TENANT, 'files/blob.bin', ARTIFACT, 'application/octet-stream');
    await client.schedules.put(TENANT, 'daily', {
      agent: 'helper',
      scope: 'daily',
      payload: { text: 'good morning' },
      every_ms: 86_400_000,
    });
    await client.secrets.put(TENANT, 'api_key', { value: 's3cr3t-value' });
    token = (await client.tenants.mintToken(TENANT, { name: 'laptop' })).token;
    const modules = await buildModules();
    await client.wasmTools.put(TENANT, 'echo', {
      description: 'echoes',
      input_schema: { type: 'object' },
      effect: 'idempotent',
      module_base64: Buffer.from(modules.echo).toString('base64'),
    });
    before3.wasm = await client.wasmTools.get(TENANT, 'echo');
    const hook = await fetch(`${source.url}/v1/tenants/${TENANT}/webhooks/ops`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'http://127.0.0.1:9/hook' }),
    });
    assert.equal(hook.status, 201, await hook.text());
    before3.webhooks = await (await fetch(`${source.url}/v1/tenants/${TENANT}/webhooks`)).json();
    before3.thread = await client.threads.get(TENANT, 'helper', 'chat');
    before3.schedule = await client.schedules.get(TENANT, 'daily');
  });
  after(async () => {
    await source?.close();
  });

  it('refuses an export while a run is in flight, and writes no file', async () => {
    const client = createKeelClient({ baseUrl: source.url });
    const slow = await client.turns.submit(TENANT, {
      agent: 'helper',
      scope: 'slow',
      payload: { text: '@sleep 60000\nslow' },
    });
    const out = join(work, 'refused.jsonl');
    const refused = keel('export', TENANT, '--store-url', source.config.store.url, '--out', out);
    await client.runs.cancel(TENANT, slow.run_id);
    await client.turns.wait(TENANT, slow.run_id, 20_000);
    assert.equal(refused.code, 1, refused.out);
    assert.match(refused.out, /CONFLICT: tenant mover has 1 run\(s\) in flight/);
    assert.match(refused.out, new RegExp(slow.run_id));
    assert.equal(existsSync(out), false);
  });

  it('exports from the running SQLite keel into a 0600 file of checked lines', () => {
    file = join(work, 'mover.jsonl');
    const exported = keel('export', TENANT, '--store-url', source.config.store.url, '--out', file);
    assert.equal(exported.code, 0, exported.out);
    assert.match(exported.out, /exported tenant mover: \d+ rows/);
    assert.match(exported.out, /holds the tenant's secret values/);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    const header = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
    assert.equal(header.format, 'keel-tenant-export');
    assert.equal(header.version, 1);
    assert.equal(header.tenant, TENANT);
    assert.equal(header.source, 'sqlite');
    const end = JSON.parse(lines.at(-1) ?? '') as Record<string, unknown>;
    assert.deepEqual(end, { format: 'keel-tenant-export-end', rows: lines.length - 2 });
  });

  it('imports into PostgreSQL, and a keel there continues the conversation', async () => {
    const imported = keel('import', file, '--store-url', pgUrl(targetSchema));
    assert.equal(imported.code, 0, imported.out);
    assert.match(imported.out, /imported tenant mover: \d+ rows/);

    const target = await startTestKeel({
      toml: TOML,
      env: { KEEL_STORE_URL: pgUrl(targetSchema) },
    });
    try {
      assert.equal(target.store.kind, 'postgres');
      const client = createKeelClient({ baseUrl: target.url });
      // The runs, finished, with their journal.
      const runs = await client.runs.list(TENANT);
      const sourceRuns = await createKeelClient({ baseUrl: source.url }).runs.list(TENANT);
      assert.equal(runs.runs.length, 4); // the three turns and the cancelled slow one
      assert.deepEqual(runs.runs, sourceRuns.runs);
      const entries = await client.runs.entries(TENANT, before3.runIds[0] ?? '');
      assert.ok(entries.entries.length >= 2, JSON.stringify(entries));
      // The thread, as it was.
      assert.deepEqual(await client.threads.get(TENANT, 'helper', 'chat'), before3.thread);
      // Memory: facts, and their vectors (a semantic search needs them; no reindex ran).
      const facts = await client.memory.list(TENANT, 'notes');
      assert.deepEqual(facts.items.map((fact) => fact.id).sort(), ['name', 'owls']);
      assert.equal(await countRows(targetSchema, 'memory_facts WHERE vector IS NOT NULL'), 2);
      const hits = await client.memory.search(TENANT, 'notes', { q: 'owls', mode: 'semantic' });
      assert.equal(hits.results[0]?.id, 'owls');
      // The artifact's bytes, exactly.
      const artifact = await client.artifacts.get(TENANT, 'files/blob.bin');
      assert.deepEqual(Buffer.from(artifact.body), ARTIFACT);
      // The schedule, the secret's value, the token.
      assert.deepEqual(await client.schedules.get(TENANT, 'daily'), before3.schedule);
      assert.equal(await target.store.getSecretValue(TENANT, 'api_key'), 's3cr3t-value');
      // The WebAssembly tool (its module's digest) and the webhook.
      assert.deepEqual(await client.wasmTools.get(TENANT, 'echo'), before3.wasm);
      const hooks: unknown = await (
        await fetch(`${target.url}/v1/tenants/${TENANT}/webhooks`)
      ).json();
      assert.deepEqual(hooks, before3.webhooks);
      assert.match(JSON.stringify(hooks), /"name":"ops"/);
      const asTenant = createKeelClient({ baseUrl: target.url, token });
      assert.equal((await asTenant.agents.list(TENANT)).agents[0]?.name, 'helper');
      // The usage counters were recounted by the target's triggers.
      const sqlite = new Database(source.config.store.url.slice('sqlite:'.length), {
        readonly: true,
      });
      const usageBefore = sqlite
        .prepare('SELECT memory_bytes, artifact_bytes FROM tenant_usage WHERE tenant = ?')
        .get(TENANT);
      sqlite.close();
      assert.deepEqual(await usageOn(targetSchema), usageBefore);
      assert.equal((usageBefore as { artifact_bytes: number }).artifact_bytes, ARTIFACT.length);

      // The next turn of the same scope: the model gets the three earlier turns too, so
      // its input is larger than the same text's in a new scope.
      const next = await client.turns.submit(TENANT, {
        agent: 'helper',
        scope: 'chat',
        payload: { text: 'what is my name?' },
      });
      const continued = await client.turns.wait(TENANT, next.run_id, 20_000);
      assert.equal(continued.run.status, 'succeeded');
      const fresh = await client.turns.submit(TENANT, {
        agent: 'helper',
        scope: 'new-scope',
        payload: { text: 'what is my name?' },
      });
      const alone = await client.turns.wait(TENANT, fresh.run_id, 20_000);
      assert.ok(
        continued.run.usage.input_tokens > alone.run.usage.input_tokens,
        `${continued.run.usage.input_tokens} > ${alone.run.usage.input_tokens}`,
      );
      // The same context the third turn had, plus that turn and its answer.
      assert.ok(continued.run.usage.input_tokens > before3.input3);
      const thread = await client.threads.get(TENANT, 'helper', 'chat');
      const texts = JSON.stringify(thread);
      for (const said of ['my name is Ada', 'I like owls', 'echo: what is my name?']) {
        assert.ok(texts.includes(said), said);
      }
      assert.equal(thread.turns, (before3.thread as { turns: number }).turns + 1);
    } finally {
      await target.close();
    }
  });

  it('round-trips PostgreSQL to SQLite: every row line the same on both backends', () => {
    const fromPg = join(work, 'from-pg.jsonl');
    const exported = keel('export', TENANT, '--store-url', pgUrl(targetSchema), '--out', fromPg);
    assert.equal(exported.code, 0, exported.out);
    const dataDir = join(work, 'back-to-sqlite');
    const imported = keel('import', fromPg, '--data-dir', dataDir);
    assert.equal(imported.code, 0, imported.out);
    const again = join(work, 'again.jsonl');
    const reexported = keel('export', TENANT, '--data-dir', dataDir, '--out', again);
    assert.equal(reexported.code, 0, reexported.out);
    const rows = (path: string) => readFileSync(path, 'utf8').trimEnd().split('\n').slice(1);
    // The conversation grew on PostgreSQL: two more runs than the first file had.
    assert.ok(rows(fromPg).length > rows(file).length);
    assert.ok(rows(fromPg).some((line) => line.includes('"vector":"')));
    assert.deepEqual(rows(again), rows(fromPg));
  });

  it('refuses to import a tenant that exists on the target, writing nothing', async () => {
    const runsBefore = await countRows(targetSchema, 'runs');
    const again = keel('import', file, '--store-url', pgUrl(targetSchema));
    assert.equal(again.code, 1, again.out);
    assert.match(again.out, /CONFLICT: tenant mover already exists on the target store/);
    assert.equal(await countRows(targetSchema, 'runs'), runsBefore);
  });

  it('refuses a file with one corrupt line, naming it, and writes nothing', async () => {
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    // A late line (after the tenant, its runs and facts would have been written).
    const index = lines.findIndex((line) => line.includes('"table":"tenant_secrets"'));
    assert.ok(index > 1);
    lines[index] = (lines[index] ?? '').replace('"value":"s3cr3t-value"', '"value":42');
    const corrupt = join(work, 'corrupt.jsonl');
    writeFileSync(corrupt, `${lines.join('\n')}\n`);
    const refused = keel('import', corrupt, '--store-url', pgUrl(corruptSchema));
    assert.equal(refused.code, 1, refused.out);
    assert.match(
      refused.out,
      new RegExp(`VALIDATION_FAILED: line ${index + 1}: tenant_secrets.value: expected text`),
    );
    // Checked before the store is opened: the schema was not even created.
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      const found = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [
        corruptSchema,
      ]);
      assert.equal(found.rowCount, 0);
    } finally {
      await client.end();
    }
    // A document column must hold JSON.
    const whole = readFileSync(file, 'utf8').trimEnd().split('\n');
    const threadAt = whole.findIndex((line) => line.includes('"table":"threads"'));
    const notJson = [...whole];
    notJson[threadAt] = (notJson[threadAt] ?? '').replace(
      /"messages":"(\\"|[^"])*"/,
      '"messages":"[{"',
    );
    const broken = join(work, 'not-json.jsonl');
    writeFileSync(broken, `${notJson.join('\n')}\n`);
    const badJson = keel('import', broken, '--store-url', pgUrl(corruptSchema));
    assert.equal(badJson.code, 1, badJson.out);
    assert.match(badJson.out, new RegExp(`line ${threadAt + 1}: threads.messages: expected json`));
    // A file cut short is refused too.
    const cut = join(work, 'cut.jsonl');
    writeFileSync(cut, `${whole.slice(0, -1).join('\n')}\n`);
    const short = keel('import', cut, '--store-url', pgUrl(corruptSchema));
    assert.equal(short.code, 1, short.out);
    assert.match(short.out, /without its end line/);
  });

  it('rolls back every row when the store refuses a late one', async () => {
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    // A well-formed file whose secret row comes twice: the primary key refuses the second
    // one after the tenant, its runs, journal, thread, facts and artifact were written.
    const index = lines.findIndex((line) => line.includes('"table":"tenant_secrets"'));
    const rows = lines.length - 2 + 1;
    const doubled = [
      ...lines.slice(0, index + 1),
      lines[index] ?? '',
      ...lines.slice(index + 1, -1),
    ];
    doubled.push(JSON.stringify({ format: 'keel-tenant-export-end', rows }));
    const twice = join(work, 'twice.jsonl');
    writeFileSync(twice, `${doubled.join('\n')}\n`);
    const refused = keel('import', twice, '--store-url', pgUrl(corruptSchema));
    assert.equal(refused.code, 1, refused.out);
    assert.match(
      refused.out,
      new RegExp(
        `CONFLICT: line ${index + 2}: the store refused the tenant_secrets row \\(.*\\); nothing was imported`,
      ),
    );
    for (const table of [
      'tenants',
      'runs',
      'run_entries',
      'threads',
      'memory_facts',
      'artifacts',
    ]) {
      assert.equal(await countRows(corruptSchema, table), 0, table);
    }
  });
});

describe('keel export --include-active: a run in flight resumes on the target', { skip }, () => {
  it('refuses while a keel owns the SQLite data dir; once stopped, the run finishes on PostgreSQL', async () => {
    const toml = `${TOML}[workers]\nlease_ms = 1000\n`;
    const source = await startTestKeel({ toml, keel: { shutdownGraceMs: 100 } });
    const url = source.config.store.url;
    const dataDir = source.dir;
    const client = createKeelClient({ baseUrl: source.url });
    await client.tenants.create({ name: 'busy' });
    await client.agents.put('busy', 'helper', { model: 'fixture/echo' });
    const submitted = await client.turns.submit('busy', {
      agent: 'helper',
      scope: 'chat',
      payload: { text: '@sleep 2000\nstill here' },
    });
    const out = join(work, 'busy.jsonl');
    try {
      const locked = keel('export', 'busy', '--store-url', url, '--out', out, '--include-active');
      assert.equal(locked.code, 1, locked.out);
      assert.match(locked.out, /DATA_DIR_LOCKED/);
      assert.equal(existsSync(out), false);
    } finally {
      // Stopped mid-run: the run stays "running" in the data dir (no process runs it).
      await source.stop();
    }
    try {
      const exported = keel('export', 'busy', '--store-url', url, '--out', out, '--include-active');
      assert.equal(exported.code, 0, exported.out);
      const runLine = readFileSync(out, 'utf8')
        .split('\n')
        .find((line) => line.includes('"table":"runs"'));
      assert.match(runLine ?? '', /"status":"(running|queued)"/);
      const header = JSON.parse(readFileSync(out, 'utf8').split('\n')[0] ?? '') as {
        include_active: boolean;
      };
      assert.equal(header.include_active, true);
      const imported = keel('import', out, '--store-url', pgUrl(activeSchema));
      assert.equal(imported.code, 0, imported.out);
      const target = await startTestKeel({ toml, env: { KEEL_STORE_URL: pgUrl(activeSchema) } });
      try {
        const done = await createKeelClient({ baseUrl: target.url }).turns.wait(
          'busy',
          submitted.run_id,
          30_000,
        );
        assert.equal(done.run.status, 'succeeded');
        assert.deepEqual(done.run.output, { reply: 'echo: still here' });
      } finally {
        await target.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe(
  'keel export --include-active from PostgreSQL: refused while a keel still works there',
  { skip },
  () => {
    it('refuses while a worker holds a run and while a scheduler beats; once both stop, exports the run', async () => {
      // A lease of 3 s (renewed every second) holds on a loaded machine, and the run
      // outlasts the export's child process.
      const toml = `${TOML}[workers]\nlease_ms = 3000\n`;
      const env = { KEEL_STORE_URL: pgUrl(pgSourceSchema) };
      const fast = { shutdownGraceMs: 100 };
      // api + worker, no scheduler: only the run's lease shows that a keel works here.
      const api = await startTestKeel({ toml, env, keel: { ...fast, role: 'api' } });
      const worker = await startTestKeel({ toml, env, keel: { ...fast, role: 'worker' } });
      const client = createKeelClient({ baseUrl: api.url });
      await client.tenants.create({ name: 'leased' });
      await client.agents.put('leased', 'helper', { model: 'fixture/echo' });
      const submitted = await client.turns.submit('leased', {
        agent: 'helper',
        scope: 'chat',
        payload: { text: '@sleep 15000\nstill here' },
      });
      const out = join(work, 'leased.jsonl');
      const exportActive = () =>
        keel(
          'export',
          'leased',
          '--store-url',
          pgUrl(pgSourceSchema),
          '--out',
          out,
          '--include-active',
        );
      try {
        const deadline = Date.now() + 10_000;
        while ((await client.runs.get('leased', submitted.run_id)).run.status !== 'running') {
          assert.ok(Date.now() < deadline, 'the worker claims the run');
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const held = exportActive();
        assert.equal(held.code, 1, held.out);
        assert.match(held.out, /CONFLICT/);
        assert.match(held.out, new RegExp(`held by a worker \\(${submitted.run_id}; leased until`));
        assert.doesNotMatch(held.out, /scheduler beat/);
        assert.equal(existsSync(out), false, 'no file');
      } finally {
        await worker.close(); // mid-run: the run stays `running` (no worker takes it here)
        await api.close();
      }
      // The lease (3 s) runs out with nobody renewing it: the run moves with the tenant.
      let exported = exportActive();
      for (const deadline = Date.now() + 15_000; exported.code !== 0 && Date.now() < deadline;) {
        assert.match(exported.out, /held by a worker/);
        await new Promise((resolve) => setTimeout(resolve, 250));
        exported = exportActive();
      }
      assert.equal(exported.code, 0, exported.out);
      const runLine = readFileSync(out, 'utf8')
        .split('\n')
        .find((line) => line.includes('"table":"runs"'));
      assert.match(runLine ?? '', /"status":"(running|queued)"/);
      rmSync(out);

      // A keel with the scheduler (role all) beats on the store: refused though no run is held.
      const all = await startTestKeel({ toml, env, keel: fast });
      try {
        // Its first beat comes at its scheduler's first tick, not at once.
        const beaten = async () => {
          const pgClient = new pg.Client({ connectionString: POSTGRES_URL });
          await pgClient.connect();
          try {
            const result = await pgClient.query(
              `SELECT 1 FROM "${pgSourceSchema}".scheduler_heartbeat
               WHERE beat_at > floor(extract(epoch from now()) * 1000) - 5000`,
            );
            return result.rowCount === 1;
          } finally {
            await pgClient.end();
          }
        };
        for (const deadline = Date.now() + 15_000; !(await beaten());) {
          assert.ok(Date.now() < deadline, 'the scheduler beats');
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const beating = exportActive();
        assert.equal(beating.code, 1, beating.out);
        assert.match(
          beating.out,
          /CONFLICT: --include-active: a keel process still works on this store/,
        );
        assert.match(beating.out, /a scheduler beat \d+ s ago/);
        assert.equal(existsSync(out), false, 'no file');
      } finally {
        await all.close();
      }
    });
  },
);
