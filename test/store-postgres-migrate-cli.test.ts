// `keel migrate` on PostgreSQL: --check is non-zero on a fresh schema and zero once
// migrated, and the printed URL never shows a password.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, describe, it } from 'node:test';
import {
  dropSchemas,
  freshSchemaName,
  POSTGRES_URL,
  skipUnlessPostgres,
} from './helpers/postgres.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const skip = await skipUnlessPostgres('store-postgres-migrate-cli.test.ts');
const schema = freshSchemaName('keel_migrate_cli');
after(() => dropSchemas([schema]));

function migrate(...args: string[]): { code: number | null; out: string } {
  const url = new URL(POSTGRES_URL);
  url.password = 'not-a-real-secret';
  url.searchParams.set('schema', schema);
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'migrate', '--store-url', url.toString(), ...args],
    { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
  );
  return { code: result.status, out: `${result.stdout}${result.stderr}` };
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
