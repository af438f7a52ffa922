// SQLite migration 014 rebuilds `deliveries` so that a run can have its result delivery
// and approval deliveries (docs/approvals.md). On a database with data, the rebuild keeps
// every delivery (as kind `result`), foreign keys hold, and the new key admits one result
// per run plus one approval per (run, call).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { sqliteMigratedBefore } from './helpers/sqlite-migrated.ts';
import { applyMigrations, loadMigrations } from '../src/store/sqlite/migrations.ts';

const dir = mkdtempSync(join(tmpdir(), 'keel-migrate-014-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('SQLite migration 014 (deliveries keyed by run, kind and call)', () => {
  it('keeps every delivery as a result delivery; one result per run, one approval per call', () => {
    const path = join(dir, 'keel.db');
    const db = sqliteMigratedBefore(path, 14);
    const all = loadMigrations();
    const now = Date.now();
    const insertRun = db.prepare(
      `INSERT INTO runs (run_id, tenant, agent, scope, source, input, fingerprint, status, usage, created_at)
       VALUES (?, 't', 'a', ?, 'api', '{}', 'f', 'succeeded', '{}', ?)`,
    );
    const insertDelivery = db.prepare(
      `INSERT INTO deliveries (delivery_id, tenant, run_id, destination, status, idempotency_key,
         next_attempt_at, created_at, updated_at) VALUES (?, 't', ?, 'tg:1', 'pending', ?, ?, ?, ?)`,
    );
    for (let i = 0; i < 20; i += 1) {
      insertRun.run(`r${i}`, `s${i}`, now);
      insertDelivery.run(`d${i}`, `r${i}`, `k${i}`, now, now, now);
    }
    applyMigrations(db, all, path, Date.now);
    const rows = db
      .prepare('SELECT kind, call_id, payload FROM deliveries ORDER BY delivery_id')
      .all() as { kind: string; call_id: string | null; payload: string | null }[];
    assert.equal(rows.length, 20);
    assert.ok(rows.every((row) => row.kind === 'result' && row.call_id === null));
    assert.deepEqual(db.pragma('foreign_key_check'), []);

    const insertKind = db.prepare(
      `INSERT INTO deliveries (delivery_id, tenant, run_id, destination, status, idempotency_key,
         next_attempt_at, created_at, updated_at, kind, call_id)
       VALUES (?, 't', 'r0', 'tg:1', 'pending', ?, 0, 0, 0, ?, ?)`,
    );
    assert.throws(() => insertKind.run('x1', 'x1', 'result', null), /UNIQUE/);
    insertKind.run('x2', 'x2', 'approval', 'c1');
    insertKind.run('x3', 'x3', 'approval', 'c2');
    assert.throws(() => insertKind.run('x4', 'x4', 'approval', 'c1'), /UNIQUE/);
    assert.throws(() => insertKind.run('x5', 'x5', 'approval', null), /CHECK/);
    // The run's deletion still cascades to all of its deliveries.
    db.prepare("DELETE FROM runs WHERE run_id = 'r0'").run();
    assert.equal(
      (
        db.prepare("SELECT COUNT(*) AS n FROM deliveries WHERE run_id = 'r0'").get() as {
          n: number;
        }
      ).n,
      0,
    );
    db.close();
  });
});
