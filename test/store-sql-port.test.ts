// The dialect port the shared store repositories are written against (src/store/sql/):
// one query renders with each backend's placeholders and values, fragments splice in
// with their values in order, and a shared upsert tells a create from a replace without
// PostgreSQL's xmax (repositories/upsert.ts), whatever the clock does.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fromBoundText, join as joinSql, limitOf, raw, sql } from '../src/store/sql/query.ts';
import { postgresDialect } from '../src/store/postgres/dialect.ts';
import { sqliteDialect } from '../src/store/sqlite/dialect.ts';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import type { StoreContext } from '../src/store/sqlite/context.ts';
import { drive as driveSqlite, within as withinSqlite } from '../src/store/sqlite/steps.ts';
import type { Sql } from '../src/store/postgres/context.ts';
import { drive as drivePostgres } from '../src/store/postgres/steps.ts';
import type { Dialect } from '../src/store/sql/dialect.ts';
import type { StoreChange } from '../src/store/store.ts';
import { Reads, Writes } from '../src/store/sql/steps.ts';
import type { Query } from '../src/store/sql/query.ts';
import { schedulerStatus } from '../src/store/repositories/scheduler-heartbeat.ts';
import Database from 'better-sqlite3';

describe('sql port: one query, two dialects', () => {
  const tenant = 'acme';
  const query = sql`SELECT * FROM agents WHERE tenant = ${tenant} AND ${sql`name > ${'b'}`} ORDER BY name LIMIT ${limitOf(11)}`;

  it('binds values in text order, fragments spliced in', () => {
    assert.deepEqual(query.values, ['acme', 'b', 11]);
    assert.equal(
      sqliteDialect.text(query),
      'SELECT * FROM agents WHERE tenant = ? AND name > ? ORDER BY name LIMIT CAST(? AS INTEGER)',
    );
    assert.equal(
      postgresDialect.text(query),
      'SELECT * FROM agents WHERE tenant = $1 AND name > $2 ORDER BY name LIMIT CAST($3 AS INTEGER)',
    );
  });

  it('keeps one text per statement in the code: the same string object at every call', () => {
    const byTenant = (name: string) => sql`SELECT * FROM agents WHERE tenant = ${name}`;
    const first = byTenant('a');
    const second = byTenant('b');
    assert.equal(first.parts, second.parts, 'a fragment-free statement reuses its template');
    assert.deepEqual(second.values, ['b']);
    for (const dialect of [sqliteDialect, postgresDialect]) {
      // Identical text is not enough: the driver's statement cache hashes a new string
      // object again; the cached one keeps its hash.
      assert.ok(Object.is(dialect.text(first), dialect.text(second)));
    }
    const spliced = (name: string) => sql`SELECT * FROM agents WHERE ${sql`tenant = ${name}`}`;
    assert.notEqual(spliced('a').parts, spliced('b').parts);
    assert.equal(sqliteDialect.text(spliced('a')), 'SELECT * FROM agents WHERE tenant = ?');
  });

  it('writes raw names as text and joins fragments', () => {
    const where = joinSql([sql`a = ${1}`, sql`b = ${2}`, raw('c IS NULL')], ' AND ');
    const q = sql`DELETE FROM ${raw('threads')} WHERE ${where}`;
    assert.equal(
      postgresDialect.text(q),
      'DELETE FROM threads WHERE a = $1 AND b = $2 AND c IS NULL',
    );
    assert.deepEqual(q.values, [1, 2]);
  });

  it('renders the few real differences per backend', () => {
    const greatest = (d: typeof sqliteDialect) =>
      d.text(d.greatest(sql`${5}`, sql`updated_at + 1`));
    assert.equal(greatest(sqliteDialect), 'MAX(?, updated_at + 1)');
    assert.equal(greatest(postgresDialect), 'GREATEST($1, updated_at + 1)');
    assert.equal(sqliteDialect.value(true), 1);
    assert.equal(postgresDialect.value(true), true);
    assert.equal(sqliteDialect.turnsOn('usage:acme'), null);
    assert.deepEqual(postgresDialect.turnsOn('usage:acme')?.values, ['usage:acme']);
  });

  it('renders the claim, index and JSON fragments per backend', () => {
    const claim = (d: Dialect) =>
      d.text(sql`SELECT d.* FROM deliveries d${d.indexedBy('deliveries_due')} JOIN runs r
        ON r.run_id = d.run_id LIMIT ${limitOf(5)}${d.skipsLocked(['d'])}`);
    assert.match(
      claim(sqliteDialect),
      /^SELECT d\.\* FROM deliveries d INDEXED BY deliveries_due JOIN/,
    );
    assert.match(claim(sqliteDialect), /LIMIT CAST\(\? AS INTEGER\)$/);
    assert.match(claim(postgresDialect), /^SELECT d\.\* FROM deliveries d JOIN/);
    assert.match(
      claim(postgresDialect),
      /LIMIT CAST\(\$1 AS INTEGER\) FOR UPDATE OF d SKIP LOCKED$/,
    );
    assert.equal(
      postgresDialect.text(postgresDialect.skipsLocked(['r', 'a'])),
      ' FOR UPDATE OF r, a SKIP LOCKED',
    );
    const text = (d: Dialect) => d.text(d.jsonText(raw('input'), 'text')).replace(/\s+/g, ' ');
    assert.equal(
      text(sqliteDialect),
      "CASE WHEN json_type(input, '$.text') = 'text' THEN json_extract(input, '$.text') END",
    );
    assert.equal(
      text(postgresDialect),
      "CASE WHEN jsonb_typeof(input::jsonb -> 'text') = 'string' THEN input::jsonb ->> 'text' END",
    );
  });

  it('turns text written with a bind callback into a query, a value per mention', () => {
    const q = fromBoundText<string | number>((bind) => {
      const t = bind('acme');
      return `SELECT 1 WHERE tenant = ${t()} OR owner = ${t()} LIMIT ${bind(3)()}`;
    });
    assert.deepEqual(q.values, ['acme', 'acme', 3]);
    assert.equal(postgresDialect.text(q), 'SELECT 1 WHERE tenant = $1 OR owner = $2 LIMIT $3');
  });
});

describe('sql port on SQLite: the shared upsert', () => {
  const dir = mkdtempSync(join(os.tmpdir(), 'keel-sql-port-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('tells a create from a replace, even when the clock goes back', async () => {
    let now = 1_000_000;
    const store = await openSqliteStore({
      path: join(dir, 'keel.db'),
      durability: 'process',
      now: () => now,
    });
    try {
      await store.createTenant('acme', {});
      const first = await store.putWebhook('acme', 'hook', 'https://a.example', 's1');
      now -= 500;
      const second = await store.putWebhook('acme', 'hook', 'https://b.example', 's2');
      assert.equal(first.created, true);
      assert.equal(second.created, false);
      assert.ok(Date.parse(second.webhook.updated_at) > Date.parse(first.webhook.updated_at));
      assert.equal((await store.getWebhook('acme', 'hook'))?.secret, 's1');
    } finally {
      await store.close();
    }
  });
});

describe('sql port on SQLite: a partial index still answers a shared statement', () => {
  const dir = mkdtempSync(join(os.tmpdir(), 'keel-sql-port-plan-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("counts due schedules through schedules_due (dialect.isTrue writes SQLite's = 1)", async () => {
    const path = join(dir, 'keel.db');
    await (await openSqliteStore({ path, durability: 'process' })).close();
    const op = schedulerStatus(new Reads(sqliteDialect), 1_000);
    op.next(); // the heartbeat row
    const due = op.next(undefined).value as { kind: string; query: Query };
    assert.equal(due.kind, 'one');
    const db = new Database(path, { readonly: true });
    try {
      const plan = db
        .prepare(`EXPLAIN QUERY PLAN ${sqliteDialect.text(due.query)}`)
        .all(...due.query.values.map(sqliteDialect.value)) as { detail: string }[];
      assert.ok(
        plan.some((step) => step.detail.includes('schedules_due')),
        JSON.stringify(plan),
      );
    } finally {
      db.close();
    }
  });
});

describe('sql port: a call into per-backend code inside a shared write', () => {
  // Only call steps here, so the drivers never touch their connection.
  const noSqlite = {} as StoreContext;
  const noPostgres = {} as Sql;
  function* enqueueOrSkip(tx: Writes, enqueue: () => number | Promise<number>) {
    try {
      return `fired ${yield* tx.call(enqueue)}`;
    } catch (error) {
      return `skipped: ${(error as Error).message}`;
    }
  }
  const writes = (dialect: Dialect) => new Writes(dialect, 0, []);

  it('hands the result back, or throws the error where the shared write can catch it', async () => {
    assert.equal(
      driveSqlite(
        noSqlite,
        enqueueOrSkip(writes(sqliteDialect), () => 7),
      ),
      'fired 7',
    );
    assert.equal(
      await drivePostgres(
        noPostgres,
        enqueueOrSkip(writes(postgresDialect), async () => 7),
      ),
      'fired 7',
    );
    const full = () => {
      throw new Error('queue full');
    };
    assert.equal(
      driveSqlite(noSqlite, enqueueOrSkip(writes(sqliteDialect), full)),
      'skipped: queue full',
    );
    assert.equal(
      await drivePostgres(
        noPostgres,
        enqueueOrSkip(writes(postgresDialect), () => Promise.reject(new Error('queue full'))),
      ),
      'skipped: queue full',
    );
  });

  it('refuses an asynchronous call inside a SQLite write', () => {
    assert.equal(
      driveSqlite(
        noSqlite,
        enqueueOrSkip(writes(sqliteDialect), async () => 7),
      ),
      'skipped: a SQLite write cannot await',
    );
  });

  it("hands a shared step inside an open SQLite write that write's changes, never a spare list", () => {
    const opened: StoreChange[] = [];
    const change = { tenant: 'acme' } as unknown as StoreChange;
    function* pushChange(tx: Writes) {
      tx.changes.push(change);
      return yield* tx.call(() => 1);
    }
    assert.equal(withinSqlite(noSqlite, pushChange, { now: 0, changes: opened }), 1);
    assert.deepEqual(opened, [change]);
    // @ts-expect-error without the open write's changes, a pushed change would be lost
    assert.throws(() => withinSqlite(noSqlite, pushChange, { now: 0 }));
  });
});
