// `keel migrate` on PostgreSQL: --check is non-zero on a fresh schema and zero once
// migrated, and the printed URL never shows a password. A database that does not exist
// is created by migrate; a user who may not create it gets the exact command instead,
// and `keel serve` names the missing database and both ways out.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { after, describe, it } from 'node:test';
import {
  dropSchemas,
  freshSchemaName,
  POSTGRES_URL,
  skipUnlessPostgres,
} from './helpers/postgres.ts';
import { KEEL_CLI } from './helpers/keel-cli.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const skip = await skipUnlessPostgres('store-postgres-migrate-cli.test.ts');
const schema = freshSchemaName('keel_migrate_cli');
const home = mkdtempSync(join(tmpdir(), 'keel-migrate-home-'));
after(() => dropSchemas([schema]));
after(() => rmSync(home, { recursive: true, force: true }));

function keel(command: string, storeUrl: string, ...args: string[]) {
  const result = spawnSync(
    process.execPath,
    [...KEEL_CLI, command, '--store-url', storeUrl, ...args],
    // KEEL_HOME: no keel.toml nor data dir of the real home is read or written.
    { cwd: ROOT, encoding: 'utf8', timeout: 60_000, env: { ...process.env, KEEL_HOME: home } },
  );
  return { code: result.status, out: `${result.stdout}${result.stderr}` };
}

function migrate(...args: string[]): { code: number | null; out: string } {
  const url = new URL(POSTGRES_URL);
  url.password = 'not-a-real-secret';
  url.searchParams.set('schema', schema);
  return keel('migrate', url.toString(), ...args);
}

async function admin<T>(body: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}

describe('keel migrate on PostgreSQL', { skip }, () => {
  it('--check reports pending on a fresh schema, migrate applies, --check is then current', () => {
    const pending = migrate('--check');
    assert.equal(pending.code, 1, pending.out);
    assert.match(pending.out, /pending migrations/);
    const applied = migrate();
    assert.equal(applied.code, 0, applied.out);
    assert.match(applied.out, /applied 1 /);
    const current = migrate('--check');
    assert.equal(current.code, 0, current.out);
    assert.match(current.out, /schema current/);
    for (const output of [pending.out, applied.out, current.out]) {
      assert.doesNotMatch(output, /not-a-real-secret/);
    }
  });
});

describe('keel migrate creates a missing PostgreSQL database', { skip }, () => {
  const suffix = randomBytes(4).toString('hex');
  const database = `keel_created_${process.pid}_${suffix}`;
  const role = `keel_nocreate_${process.pid}_${suffix}`;
  after(async () => {
    if (skip) return;
    await admin(async (client) => {
      await client.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      await client.query(`DROP ROLE IF EXISTS "${role}"`);
    });
  });

  it('keel serve names the missing database and both ways out; migrate creates it', async () => {
    const url = new URL(POSTGRES_URL);
    url.pathname = `/${database}`;
    url.password = 'not-a-real-secret'; // trust auth: ignored by the server
    const served = keel('serve', url.toString(), '--listen', '127.0.0.1:0');
    assert.equal(served.code, 1, served.out);
    // Before the store opens, serve says what it read and where it would write.
    assert.ok(
      served.out.includes(
        `config none; data dir ${home}/data (KEEL_HOME); store postgres://127.0.0.1:5432/${database}`,
      ),
      served.out,
    );
    assert.doesNotMatch(served.out, /not-a-real-secret/);
    assert.match(served.out, new RegExp(`database "${database}" does not exist: run keel migrate`));
    assert.match(
      served.out,
      new RegExp(`createdb --host=127.0.0.1 --port=5432 --username=postgres ${database}`),
    );

    const created = keel('migrate', url.toString());
    assert.equal(created.code, 0, created.out);
    assert.match(created.out, new RegExp(`^created database ${database}$`, 'm'));
    assert.match(created.out, /applied 1 /);
    const exists = await admin((client) =>
      client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]),
    );
    assert.equal(exists.rowCount, 1);
    const again = keel('migrate', url.toString());
    assert.equal(again.code, 0, again.out);
    assert.doesNotMatch(again.out, /created database/);
    assert.match(again.out, /nothing to apply/);
  });

  it('a user who may not create databases is told the exact command', async () => {
    await admin((client) => client.query(`CREATE ROLE "${role}" LOGIN NOCREATEDB`));
    const url = new URL(POSTGRES_URL);
    url.username = role;
    url.password = 'not-a-real-secret';
    url.pathname = `/${database}_never`;
    const refused = keel('migrate', url.toString());
    assert.equal(refused.code, 1, refused.out);
    assert.match(refused.out, /STORE_UNAVAILABLE/);
    assert.match(refused.out, /keel could not create it \(permission denied/);
    assert.ok(
      refused.out.includes(
        `create it with: createdb --host=127.0.0.1 --port=5432 --username=${role} ${database}_never`,
      ),
      refused.out,
    );
    assert.doesNotMatch(refused.out, /not-a-real-secret/);
  });
});
