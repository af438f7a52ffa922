// SQLite migration 015 rebuilds run_events and run_entries as rowid tables (appended in
// commit order, found through a unique (run_id, seq) index), usage_ledger WITHOUT ROWID,
// and drops runs_by_status (docs/store.md, "Pages a turn writes"). On a database with
// data it must keep every row as it was, keep (run_id, seq) unique, keep the cascade from
// runs, and leave the journal's reads on the new index instead of scanning the table.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type Database from 'better-sqlite3';
import { sqliteMigratedBefore } from './helpers/sqlite-migrated.ts';
import { applyMigrations, loadMigrations } from '../src/store/sqlite/migrations.ts';

const dir = mkdtempSync(join(tmpdir(), 'keel-migrate-015-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const RUNS = 40;

function fill(db: Database.Database): void {
  const now = 1_700_000_000_000;
  const insertRun = db.prepare(
    `INSERT INTO runs (run_id, tenant, agent, scope, source, input, fingerprint, status, usage, created_at)
     VALUES (?, 't', 'a', ?, 'api', '{}', 'f', ?, '{}', ?)`,
  );
  const entry = db.prepare('INSERT INTO run_entries VALUES (?, ?, 1, ?, ?, ?)');
  const event = db.prepare('INSERT INTO run_events VALUES (?, ?, ?, ?, ?)');
  const usage = db.prepare(
    "INSERT INTO usage_ledger VALUES (?, '2026-12-02', ?, 't', 'a', ?, ?, ?, 1, 0.5)",
  );
  // Runs interleaved as they are in flight: every run's rows written round by round.
  for (let i = 0; i < RUNS; i += 1)
    insertRun.run(`r${i}`, `s${i % 5}`, i % 3 ? 'succeeded' : 'queued', now + i);
  for (let seq = 1; seq <= 6; seq += 1)
    for (let i = 0; i < RUNS; i += 1) {
      entry.run(`r${i}`, seq, seq % 2 ? 'user' : 'assistant', `{"n":${seq}}`, now + seq);
      event.run(`r${i}`, seq, now + seq, `e${seq}`, JSON.stringify({ run: i, seq }));
    }
  for (let i = 0; i < RUNS; i += 1) usage.run(`r${i}`, `m${i % 2}`, `s${i % 5}`, i, 2 * i);
}

function contents(db: Database.Database) {
  return {
    entries: db
      .prepare('SELECT run_id, seq, attempt, kind, body, ts FROM run_entries ORDER BY run_id, seq')
      .all(),
    events: db
      .prepare('SELECT run_id, seq, ts, type, data FROM run_events ORDER BY run_id, seq')
      .all(),
    usage: db.prepare('SELECT * FROM usage_ledger ORDER BY run_id, day, model').all(),
  };
}

function plan(db: Database.Database, sql: string): string {
  const params = [...sql].filter((c) => c === '?').map(() => 'r0');
  return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[])
    .map((row) => row.detail)
    .join('; ');
}

describe('SQLite migration 015 (journal tables appended in commit order)', () => {
  it('keeps every entry, event and usage row; (run_id, seq) stays unique; cascades hold', () => {
    const path = join(dir, 'keel.db');
    const db = sqliteMigratedBefore(path, 15);
    fill(db);
    const before = contents(db);
    applyMigrations(db, loadMigrations(), path, Date.now);
    assert.deepEqual(contents(db), before);
    assert.equal(before.events.length, RUNS * 6);
    assert.deepEqual(db.pragma('foreign_key_check'), []);

    // The journal's reads go through the (run_id, seq) indexes, not a scan.
    assert.match(
      plan(
        db,
        'SELECT seq, ts, type, data FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?',
      ),
      /USING INDEX run_events_by_run/,
    );
    assert.match(
      plan(
        db,
        'SELECT run_id, seq, attempt, kind, body, ts FROM run_entries WHERE run_id = ? ORDER BY seq',
      ),
      /USING INDEX run_entries_by_run/,
    );
    // The status counts read a covering index (runs_by_status is gone), not the table.
    assert.match(plan(db, 'SELECT status, COUNT(*) FROM runs GROUP BY status'), /COVERING INDEX/);
    const dropped = db
      .prepare("SELECT COUNT(*) AS n FROM sqlite_schema WHERE name = 'runs_by_status'")
      .get() as { n: number };
    assert.equal(dropped.n, 0);

    // A second event or entry at the same (run_id, seq) is refused, as the key refused it.
    assert.throws(
      () =>
        db
          .prepare(
            "INSERT INTO run_events (run_id, seq, ts, type, data) VALUES ('r0', 1, 0, 'x', '{}')",
          )
          .run(),
      /UNIQUE/,
    );
    assert.throws(
      () =>
        db
          .prepare(
            "INSERT INTO run_entries (run_id, seq, attempt, kind, body, ts) VALUES ('r0', 1, 1, 'user', '{}', 0)",
          )
          .run(),
      /UNIQUE/,
    );
    // New rows take the next id: appended after every migrated row.
    db.prepare(
      "INSERT INTO run_events (run_id, seq, ts, type, data) VALUES ('r0', 7, 0, 'x', '{}')",
    ).run();
    const ids = db.prepare('SELECT MAX(id) AS last, COUNT(*) AS n FROM run_events').get() as {
      last: number;
      n: number;
    };
    assert.equal(ids.last, ids.n);

    // Deleting a run still deletes its journal (the foreign keys were rebuilt with it).
    db.prepare("DELETE FROM runs WHERE run_id = 'r1'").run();
    const left = contents(db);
    assert.equal(left.events.length, before.events.length + 1 - 6);
    assert.equal(left.entries.length, before.entries.length - 6);
    // The ledger has no foreign key to runs: a deleted run's usage stays billed.
    assert.equal(left.usage.length, RUNS);
    console.log(
      `migration 015 kept: ${before.entries.length} entries, ${before.events.length} events, ${before.usage.length} usage rows`,
    );
    db.close();
  });
});
