// SQLite migration 009 rebuilds `runs` to admit the `waiting` status. On a database
// with data, the rebuild must keep every run and everything that references one (entries,
// events, deliveries): with foreign keys on, dropping the old table would cascade and
// delete them (src/store/sqlite/migrations.ts runs it with foreign keys off, checked).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { sqliteMigratedBefore } from './helpers/sqlite-migrated.ts';
import type Database from 'better-sqlite3';
import { applyMigrations, loadMigrations } from '../src/store/sqlite/migrations.ts';

const dir = mkdtempSync(join(tmpdir(), 'keel-migrate-009-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function count(db: Database.Database, table: string): number {
  return (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
}

describe('SQLite migration 009 (runs rebuilt for `waiting`)', () => {
  it('keeps runs, entries, events and deliveries; foreign keys hold; waiting is accepted', () => {
    const path = join(dir, 'keel.db');
    const db = sqliteMigratedBefore(path, 9);
    const all = loadMigrations();
    const now = Date.now();
    const insertRun = db.prepare(
      `INSERT INTO runs (run_id, tenant, agent, scope, source, input, fingerprint, status, usage, created_at)
       VALUES (?, 't', 'a', ?, 'api', '{}', 'f', ?, '{}', ?)`,
    );
    for (let i = 0; i < 50; i += 1) {
      insertRun.run(`r${i}`, `s${i % 5}`, i % 2 ? 'succeeded' : 'queued', now);
      db.prepare("INSERT INTO run_entries VALUES (?, 1, 1, 'user', '{}', ?)").run(`r${i}`, now);
      db.prepare("INSERT INTO run_events VALUES (?, 1, ?, 'run.queued', '{}')").run(`r${i}`, now);
    }
    const insertDelivery = db.prepare(
      `INSERT INTO deliveries (delivery_id, tenant, run_id, destination, status, idempotency_key,
         next_attempt_at, created_at, updated_at) VALUES (?, 't', ?, 'tg:1', 'pending', ?, ?, ?, ?)`,
    );
    for (let i = 1; i < 50; i += 2) insertDelivery.run(`d${i}`, `r${i}`, `k${i}`, now, now, now);
    const figures = () => ({
      runs: count(db, 'runs'),
      entries: count(db, 'run_entries'),
      events: count(db, 'run_events'),
      deliveries: count(db, 'deliveries'),
    });
    const before = figures();
    applyMigrations(db, all, path, Date.now);
    assert.deepEqual(figures(), before);
    assert.deepEqual(db.pragma('foreign_key_check'), []);
    assert.equal(db.pragma('foreign_keys', { simple: true }), 1, 'foreign keys are on again');
    db.prepare("UPDATE runs SET status = 'waiting' WHERE run_id = 'r0'").run();
    // The lane backstop covers waiting runs: a second holder in lane s0 is refused.
    assert.throws(
      () => db.prepare("UPDATE runs SET status = 'running' WHERE run_id = 'r10'").run(),
      /UNIQUE/,
    );
    // A cascade still works after the rebuild: deleting a run removes its entries.
    db.prepare("DELETE FROM runs WHERE run_id = 'r1'").run();
    assert.equal(count(db, 'run_entries'), before.entries - 1);
    console.log(`migration 009 kept: ${JSON.stringify(before)}`);
    db.close();
  });
});
