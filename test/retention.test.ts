// [retention] end to end: the config (defaults, ranges, runs_days bounding the journal
// ages), the pruner inside a serving keel (a run backdated past events_days loses its
// trace and entries over HTTP while its output stays, a recent run keeps them), and on
// PostgreSQL one pruner at a time (a batch finds the schema's retention lock held and
// does nothing).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { isKeelError } from '../src/errors.ts';
import type { PostgresStore } from '../src/store/postgres/index.ts';
import { openPostgresStore } from '../src/store/postgres/index.ts';
import { requestJson } from './helpers/json-request.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import {
  POSTGRES_URL,
  dropSchemas,
  freshSchemaName,
  skipUnlessPostgres,
} from './helpers/postgres.ts';
import { agentSpec, claimOrFail, fenceOf, succeeded, turn } from './store-conformance/harness.ts';

const DAY = 86_400_000;

describe('[retention] config', () => {
  const dirs: string[] = [];
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const load = (toml: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'keel-retention-config-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'keel.toml'), toml);
    return loadConfig({}, {}, dir).retention;
  };
  const refused = (toml: string, pattern: RegExp) =>
    assert.throws(
      () => load(toml),
      (error: unknown) => isKeelError(error, 'CONFIG_INVALID') && pattern.test(error.message),
    );

  it('defaults: the journal goes after 30 days, runs stay; runs_days bounds the journal ages', () => {
    assert.deepEqual(load(''), {
      events_days: 30,
      entries_days: 30,
      runs_days: 0,
      batch_rows: 500,
      interval_ms: 60_000,
    });
    const short = load('[retention]\nruns_days = 7\n');
    assert.equal(short.events_days, 7);
    assert.equal(short.entries_days, 7);
    const forever = load('[retention]\nevents_days = 0\nentries_days = 0\n');
    assert.equal(forever.events_days, 0);
    assert.equal(forever.entries_days, 0);
  });

  it('refuses out-of-range values, unknown keys, and a journal kept longer than its run', () => {
    refused('[retention]\nevents_days = 10\nruns_days = 7\n', /retention\.events_days/);
    refused('[retention]\nentries_days = 0\nruns_days = 7\n', /retention\.entries_days/);
    refused('[retention]\nbatch_rows = 5\n', /retention\.batch_rows/);
    refused('[retention]\ninterval_ms = 10\n', /retention\.interval_ms/);
    refused('[retention]\nevents_days = 1.5\n', /retention\.events_days/);
    refused('[retention]\nkeep = true\n', /unknown key "retention\.keep"/);
  });
});

describe('[retention] in a serving keel (SQLite)', () => {
  it('prunes a run past events_days on its interval: trace and entries go, the run and its output stay', async () => {
    const keel = await startTestKeel({
      toml: '[retention]\nevents_days = 1\nentries_days = 1\ninterval_ms = 1000\n',
    });
    const base = keel.url;
    const get = (path: string) => requestJson(base, 'GET', `/v1/tenants/t1${path}`);
    try {
      await requestJson(base, 'POST', '/v1/tenants', { name: 't1' });
      await requestJson(base, 'PUT', '/v1/tenants/t1/agents/a1', { model: 'fixture/echo' });
      const runTurn = async (scope: string): Promise<string> => {
        const submitted = await requestJson(base, 'POST', '/v1/tenants/t1/turns', {
          agent: 'a1',
          scope,
          payload: { text: `@call clock_now {}\nhello ${scope}` },
        });
        const runId = submitted.body.run_id as string;
        const waited = await get(`/runs/${runId}/wait?timeout_ms=30000`);
        assert.equal(waited.body.run.status, 'succeeded', waited.text);
        return runId;
      };
      const old = await runTurn('old');
      const recent = await runTurn('recent');
      assert.ok((await get(`/runs/${old}/trace`)).body.events.length > 3);
      // Two days ago, as far as retention can tell.
      const db = new Database(join(keel.dir, 'keel.db'));
      db.pragma('busy_timeout = 5000');
      db.prepare('UPDATE runs SET finished_at = finished_at - ? WHERE run_id = ?').run(
        2 * DAY,
        old,
      );
      db.close();

      let events = -1;
      for (let waited = 0; waited < 10_000 && events !== 0; waited += 100) {
        await sleep(100);
        events = (await get(`/runs/${old}/trace`)).body.events.length;
      }
      assert.equal(events, 0, 'the pruner did not run');
      assert.deepEqual((await get(`/runs/${old}/entries`)).body.entries, []);
      const run = (await get(`/runs/${old}`)).body.run;
      assert.equal(run.status, 'succeeded');
      assert.match(JSON.stringify(run.output), /hello old/);
      assert.ok((await get(`/threads/a1/old`)).body.messages.length > 0, 'the thread stays');
      assert.ok((await get(`/runs/${recent}/trace`)).body.events.length > 3);
      assert.ok((await get(`/runs/${recent}/entries`)).body.entries.length > 3);
      // A fork of the pruned run says why it cannot be made.
      const fork = await requestJson(base, 'POST', `/v1/tenants/t1/runs/${old}/fork`, {
        at_step: 1,
      });
      assert.equal(fork.status, 400, fork.text);
      assert.match(fork.text, /entries_days/);
    } finally {
      await keel.close();
    }
  });
});

const skip = await skipUnlessPostgres('test/retention.test.ts');

describe('[retention] on PostgreSQL: one pruner at a time', { skip }, () => {
  const schema = freshSchemaName('keel_retention');
  const stores: PostgresStore[] = [];
  after(async () => {
    for (const store of stores.splice(0)) await store.close();
    await dropSchemas([schema]);
  });

  it('a batch finds the retention lock held by another process and deletes nothing; then prunes', async () => {
    let now = Date.now();
    const store = await openPostgresStore({
      url: POSTGRES_URL,
      schema,
      poolSize: 2,
      now: () => now,
    });
    stores.push(store);
    await store.createTenant('t1', {});
    await store.putAgent('t1', 'a1', agentSpec());
    await store.enqueueRun(turn());
    const claimed = await claimOrFail(store);
    await store.appendProgress(fenceOf(claimed), {
      events: [{ type: 'run.note', data: {} }],
    });
    await store.finalizeRun(fenceOf(claimed), succeeded('done'));
    now += 2 * DAY;
    const input = { part: 'events' as const, older_than_ms: DAY, limit: 100, after: null };

    // Another process's pruner, mid-batch: it holds the schema's retention lock.
    const other = new pg.Client({ connectionString: POSTGRES_URL });
    await other.connect();
    try {
      await other.query('BEGIN');
      const held = await other.query(
        `SELECT pg_try_advisory_xact_lock(hashtext($1 || '.keel_retention')) AS locked`,
        [schema],
      );
      assert.equal(held.rows[0].locked, true);
      const blocked = await store.pruneRunHistory(input);
      assert.deepEqual(blocked, { deleted: 0, last: null, more: false, busy: true });
      await other.query('COMMIT');
    } finally {
      await other.end();
    }
    const pruned = await store.pruneRunHistory(input);
    assert.equal(pruned.busy, false);
    assert.ok(pruned.deleted >= 3, `deleted ${pruned.deleted}`);
    assert.deepEqual(await store.getTrace('t1', claimed.run.run_id, 0, 100), []);
  });
});
