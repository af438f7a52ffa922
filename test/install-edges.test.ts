// Two first-hour edges: a missing sqlite-vec binary (`npm install --omit=optional`)
// fails with STORE_UNAVAILABLE naming the fix, and `--port` (`npm start -- --port N`)
// changes the port of `listen` and keeps its host.

import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { it } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { isKeelError } from '../src/errors.ts';
import { loadSqliteVec } from '../src/store/sqlite/connection.ts';

it('a sqlite-vec that cannot load names the optional dependency and the fix', () => {
  const db = new Database(':memory:');
  try {
    assert.throws(
      () =>
        loadSqliteVec(db, () => {
          throw new Error('Loadble extension for sqlite-vec not found');
        }),
      (error: unknown) =>
        isKeelError(error) &&
        error.code === 'STORE_UNAVAILABLE' &&
        /--omit=optional/.test(error.message) &&
        /npm install --include=optional/.test(error.message) &&
        /not found/.test(error.message),
    );
    loadSqliteVec(db); // the real one loads
    assert.ok(db.prepare('select vec_version() as v').get());
  } finally {
    db.close();
  }
});

it('--port replaces the port of listen and keeps the host', () => {
  const config = loadConfig({ port: 9123 }, { KEEL_LISTEN: '127.0.0.2:8080' }, '/tmp');
  assert.deepEqual(config.listen, { host: '127.0.0.2', port: 9123 });
  assert.deepEqual(loadConfig({}, {}, '/tmp').listen, { host: '127.0.0.1', port: 8080 });
});
