// docs/operations.md, "PostgreSQL", done as written: `pg_dump --format=custom --schema`
// while `keel serve` runs under load, then createdb, pg_trgm, `pg_restore` into a fresh
// database and `keel serve` on it: every run acknowledged before the dump started is
// there and finishes. And `keel backup` / `keel restore` on a PostgreSQL store refuse,
// naming pg_dump / pg_restore, without writing a file.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { RoleProcesses } from './helpers/keel-roles.ts';
import {
  dropSchemas,
  freshSchemaName,
  POSTGRES_URL,
  skipUnlessPostgres,
} from './helpers/postgres.ts';
import type { JsonAnswer } from './helpers/json-request.ts';
import { requestJson } from './helpers/json-request.ts';
import { expectRunsSucceeded, startTurnLoad } from './helpers/turn-load.ts';
import { KEEL_CLI } from './helpers/keel-cli.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const TENANT = 'pgbk';
const skip = await skipUnlessPostgres('backup-postgres.test.ts');
const schema = freshSchemaName('keel_backup');
const restoredDatabase = `keel_restored_${process.pid}_${randomBytes(4).toString('hex')}`;
const dir = mkdtempSync(join(tmpdir(), 'keel-pg-backup-'));
const servers = new RoleProcesses();

/** A command as a child process, its output read until the streams close. */
function run(
  command: string,
  args: string[],
): Promise<{ code: number | null; out: string; err: string }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('KEEL_')) env[key] = value;
  }
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out, err }));
  });
}

function keel(args: string[]) {
  return run(process.execPath, [...KEEL_CLI, ...args]);
}

function databaseUrl(database: string): string {
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

function withSchema(url: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('schema', schema);
  return parsed.toString();
}

// Loose JSON for assertions: keel's /v1 API at `url`.
function call(url: string, method: string, path: string, body?: unknown): Promise<JsonAnswer> {
  return requestJson(url, method, `/v1${path}`, body);
}

describe('PostgreSQL backup with pg_dump, restore with pg_restore', { skip }, () => {
  after(async () => {
    servers.killAll();
    rmSync(dir, { recursive: true, force: true });
    if (skip) return;
    await dropSchemas([schema]);
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await client.query(`DROP DATABASE IF EXISTS "${restoredDatabase}" WITH (FORCE)`);
    } finally {
      await client.end();
    }
  });

  it('a dump under load holds every run acknowledged before it; restored, keel serves them', async () => {
    const sourceUrl = new URL(POSTGRES_URL).pathname.slice(1);
    const storeUrl = withSchema(databaseUrl(sourceUrl));
    const config = join(dir, 'keel.toml');
    writeFileSync(
      config,
      '[workers]\nlease_ms = 2000\n[tenant_limits]\nrequests_per_s = 100000\nrequest_burst = 100000\n',
    );
    // keel's own commands point at PostgreSQL's tools and write nothing.
    const refusedBackup = await keel(['backup', join(dir, 'never.db'), '--store-url', storeUrl]);
    assert.equal(refusedBackup.code, 1);
    assert.match(refusedBackup.err, /BACKEND_UNSUPPORTED: .*pg_dump --format=custom/);
    assert.equal(existsSync(join(dir, 'never.db')), false);
    const refusedRestore = await keel(['restore', join(dir, 'never.db'), '--store-url', storeUrl]);
    assert.equal(refusedRestore.code, 1);
    assert.match(refusedRestore.err, /BACKEND_UNSUPPORTED: .*pg_restore/);

    const source = await servers.start('all', storeUrl, { config });
    assert.equal((await call(source.url, 'POST', '/tenants', { name: TENANT })).status, 201);
    const agent = await call(source.url, 'PUT', `/tenants/${TENANT}/agents/a`, {
      model: 'fixture/echo',
    });
    assert.equal(agent.status, 201);
    const load = startTurnLoad(source.url, { tenant: TENANT, agent: 'a', submitters: 4 });
    await load.reach(60);
    const ackedBefore = load.acked.map((entry) => entry.runId);
    const dumpFile = join(dir, 'keel.dump');
    const dump = await run('pg_dump', [
      '--format=custom',
      `--schema=${schema}`,
      `--file=${dumpFile}`,
      databaseUrl(sourceUrl),
    ]);
    const ackedDuring = load.acked.length - ackedBefore.length;
    await load.stop();
    assert.equal(dump.code, 0, dump.err);
    assert.ok(ackedDuring > 0, 'keel took turns while pg_dump ran');
    source.child.kill('SIGTERM');
    await source.exited;

    const target = databaseUrl(restoredDatabase);
    const { hostname, port, username } = new URL(POSTGRES_URL);
    const created = await run('createdb', [
      `--host=${hostname}`,
      `--port=${port || '5432'}`,
      `--username=${username}`,
      restoredDatabase,
    ]);
    assert.equal(created.code, 0, created.err);
    const trigrams = await run('psql', [target, '-c', 'CREATE EXTENSION IF NOT EXISTS pg_trgm']);
    assert.equal(trigrams.code, 0, trigrams.err);
    const restore = await run('pg_restore', [
      `--dbname=${target}`,
      '--single-transaction',
      '--exit-on-error',
      '--no-owner',
      dumpFile,
    ]);
    assert.equal(restore.code, 0, restore.err);
    const check = await keel(['migrate', '--check', '--store-url', withSchema(target)]);
    assert.equal(check.code, 0, check.out + check.err);
    assert.match(check.out, /schema current/);

    const restored = await servers.start('all', withSchema(target), { config });
    const present = await expectRunsSucceeded(restored.url, TENANT, ackedBefore);
    const fresh = await call(restored.url, 'POST', `/tenants/${TENANT}/turns`, {
      agent: 'a',
      scope: 'after-restore',
      payload: { text: 'hello again' },
    });
    assert.equal(fresh.status, 202);
    restored.child.kill('SIGTERM');
    await restored.exited;
    console.log(
      `pg_dump under load: acked=${load.acked.length} acked_before=${ackedBefore.length} acked_during=${ackedDuring} present_after_restore=${present}`,
    );
  });
});
