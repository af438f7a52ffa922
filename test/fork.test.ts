// POST T/runs/:id/fork against a whole keel on loopback (SQLite, HTTP; in this process,
// so a loaded machine's slow process start cannot time it out) and the effect sink, a
// separate process that counts every execution of the test tools: the forked journal's
// prefix is byte-identical to the source's (read straight from the database file), no
// call recorded before the fork point runs again, a replaced user message changes only
// that entry, and bad input is a 4xx naming the field with nothing written. The same
// server shows a steered submit over HTTP (`steered: true`, the running run's id).

import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import {
  TENANT,
  call,
  effectSinkForSuite,
  setupTenant,
  waitTerminal,
} from './helpers/crash-harness.ts';
import { effectSinkTools } from './helpers/effect-sink-tools.ts';
import type { TestKeel } from './helpers/keel-server.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import { waitFor } from './helpers/wait-for.ts';

const SCRIPT = [
  '@call sink_write {"value":"one"}',
  '@call sink_write {"value":"two"}',
  'done',
].join('\n');

interface EntryBytes {
  seq: number;
  kind: string;
  body: Buffer;
  ts: number;
}

describe('fork', () => {
  let served: TestKeel | undefined;
  let dataDir: string;
  let source: string;
  // Registered before the sink's hooks: keel stops gracefully before the sink and the
  // suite's cleanup go.
  after(async () => {
    await served?.close();
  });
  const sink = effectSinkForSuite();

  before(async () => {
    const keel = await startTestKeel({ keel: { extraTools: effectSinkTools(sink().url) } });
    served = keel;
    dataDir = keel.dir;
    await setupTenant(keel.url);
    const turn = await call(keel.url, 'POST', `/v1/tenants/${TENANT}/turns`, {
      agent: 'a',
      scope: 'source',
      payload: { text: SCRIPT },
    });
    source = turn.body.run_id;
    assert.equal(await waitTerminal(keel.url, source), 'succeeded');
  });
  const url = (): string => (served as TestKeel).url;

  /** The journal as stored: raw bytes of each entry's body (a read-only connection). */
  function entries(runId: string): EntryBytes[] {
    const file = readdirSync(dataDir).find((name) => name.endsWith('.db'));
    const db = new Database(join(dataDir, file as string), { readonly: true });
    try {
      db.defaultSafeIntegers(false);
      return db
        .prepare(
          'SELECT seq, kind, CAST(body AS BLOB) AS body, ts FROM run_entries WHERE run_id = ? ORDER BY seq',
        )
        .all(runId) as EntryBytes[];
    } finally {
      db.close();
    }
  }

  const fork = (runId: string, body: unknown) =>
    call(url(), 'POST', `/v1/tenants/${TENANT}/runs/${runId}/fork`, body);

  it('the source ran both calls once', async () => {
    const effects = await sink().effects(source);
    assert.deepEqual(
      effects.map((effect) => (effect as unknown as { args: { value: string } }).args.value),
      ['one', 'two'],
    );
  });

  it('a fork at step 1: byte-identical prefix, the recorded call never runs again', async () => {
    const response = await fork(source, { at_step: 1 });
    assert.equal(response.status, 202, JSON.stringify(response.body));
    const forked = response.body.run_id;
    assert.equal(response.body.scope, `fork:${forked}`);
    assert.equal(await waitTerminal(url(), forked), 'succeeded');

    const original = entries(source);
    const copy = entries(forked);
    // user, assistant (call one), tool_result (one): the prefix up to step 1.
    const prefix = original.slice(0, 3);
    assert.deepEqual(
      prefix.map((entry) => entry.kind),
      ['user', 'assistant', 'tool_result'],
    );
    for (const [index, entry] of prefix.entries()) {
      const copied = copy[index] as EntryBytes;
      assert.equal(copied.seq, entry.seq);
      assert.equal(copied.kind, entry.kind);
      assert.ok(Buffer.compare(copied.body, entry.body) === 0, `entry ${entry.seq} byte-identical`);
    }
    // Then the fork went on by itself: a new step 2 (call two) and the answer.
    assert.deepEqual(
      copy.slice(3).map((entry) => entry.kind),
      ['assistant', 'tool_result', 'assistant'],
    );
    const effects = await sink().effects(forked);
    const values = effects.map(
      (effect) => (effect as unknown as { args: { value: string } }).args.value,
    );
    console.log(`fork[at_step=1] source_effects=2 fork_effects=${values.join(',')}`);
    assert.deepEqual(values, ['two'], 'call one (before the fork point) did not run again');
    const all = await sink().effects();
    assert.equal(
      all.filter(
        (effect) => (effect as unknown as { args: { value: string } }).args.value === 'one',
      ).length,
      1,
    );
  });

  it('a fork at step 2 with a replaced user message, in a given scope', async () => {
    const response = await fork(source, {
      at_step: 2,
      scope: 'what-if',
      payload: { text: '@reply what if' },
    });
    assert.equal(response.status, 202, JSON.stringify(response.body));
    const forked = response.body.run_id;
    assert.equal(response.body.scope, 'what-if');
    assert.equal(await waitTerminal(url(), forked), 'succeeded');
    const run = await call(url(), 'GET', `/v1/tenants/${TENANT}/runs/${forked}`);
    assert.deepEqual(run.body.run.input, { text: '@reply what if' });
    assert.match(run.body.run.output.reply, /^what if/);

    const original = entries(source);
    const copy = entries(forked);
    assert.equal(JSON.parse(copy[0]?.body.toString() ?? '{}').text, '@reply what if');
    for (let index = 1; index < 5; index += 1) {
      const copied = copy[index] as EntryBytes;
      assert.ok(Buffer.compare(copied.body, (original[index] as EntryBytes).body) === 0);
    }
    assert.equal(copy.length, 6, 'one new model step: the answer');
    assert.deepEqual(await sink().effects(forked), [], 'no tool ran in the fork');
  });

  it('bad input: 4xx naming the field, nothing written', async () => {
    const before = await call(url(), 'GET', `/v1/tenants/${TENANT}/runs?limit=200`);
    const tooFar = await fork(source, { at_step: 9 });
    assert.equal(tooFar.status, 400);
    assert.equal(tooFar.body.error.code, 'VALIDATION_FAILED');
    assert.match(tooFar.body.error.message, /at_step/);
    const negative = await fork(source, { at_step: -1 });
    assert.equal(negative.status, 400);
    assert.match(JSON.stringify(negative.body), /at_step/);
    const unknown = await fork(source, { at_step: 1, extra: true });
    assert.equal(unknown.status, 400);
    const missing = await fork('0190aaaa-0000-7000-8000-000000000000', { at_step: 0 });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'RUN_NOT_FOUND');
    const afterwards = await call(url(), 'GET', `/v1/tenants/${TENANT}/runs?limit=200`);
    assert.equal(afterwards.body.runs.length, before.body.runs.length);
  });

  it('request_id: a replay is 200 with the first fork; another fork or a turn under it is 422', async () => {
    const body = {
      at_step: 0,
      scope: 'fork-dedup',
      payload: { text: '@reply again' },
      request_id: 'fork-http-1',
    };
    const first = await fork(source, body);
    assert.equal(first.status, 202, JSON.stringify(first.body));
    assert.equal(first.body.deduplicated, false);
    const replay = await fork(source, body);
    assert.equal(replay.status, 200, JSON.stringify(replay.body));
    assert.equal(replay.body.deduplicated, true);
    assert.equal(replay.body.run_id, first.body.run_id);
    const other = await fork(source, { ...body, at_step: 1 });
    assert.equal(other.status, 422);
    assert.equal(other.body.error.code, 'IDEMPOTENCY_KEY_REUSED');
    const asTurn = await call(url(), 'POST', `/v1/tenants/${TENANT}/turns`, {
      agent: 'a',
      scope: 'fork-dedup',
      payload: { text: 'hi' },
      request_id: 'fork-http-1',
    });
    assert.equal(asTurn.status, 422);
    assert.equal(asTurn.body.error.code, 'IDEMPOTENCY_KEY_REUSED');
    // Without a scope the fork's scope is new each time, yet a replay still matches.
    const unscoped = { at_step: 0, request_id: 'fork-http-2' };
    const a = await fork(source, unscoped);
    const b = await fork(source, unscoped);
    assert.equal(a.status, 202);
    assert.equal(b.status, 200);
    assert.equal(b.body.run_id, a.body.run_id);
    assert.equal(await waitTerminal(url(), a.body.run_id), 'succeeded');
    assert.equal(await waitTerminal(url(), first.body.run_id), 'succeeded');
  });

  it('a steered submit over HTTP answers with the running run and steered: true', async () => {
    const first = await call(url(), 'POST', `/v1/tenants/${TENANT}/turns`, {
      agent: 'a',
      scope: 'steer-http',
      payload: { text: '@sleep 400\n@call clock_now {}' },
    });
    const runId = first.body.run_id;
    await waitFor('the model call started', async () => {
      const trace = await call(url(), 'GET', `/v1/tenants/${TENANT}/runs/${runId}/trace`);
      return trace.body.events.some((event: { type: string }) => event.type === 'model.request');
    });
    const steered = await call(url(), 'POST', `/v1/tenants/${TENANT}/turns`, {
      agent: 'a',
      scope: 'steer-http',
      payload: { text: '@reply Tuesday then' },
      on_busy: 'steer',
    });
    assert.equal(steered.status, 202);
    assert.equal(steered.body.run_id, runId);
    assert.equal(steered.body.steered, true);
    assert.equal(typeof steered.body.steer_id, 'string');
    assert.equal(await waitTerminal(url(), runId), 'succeeded');
    const run = await call(url(), 'GET', `/v1/tenants/${TENANT}/runs/${runId}`);
    assert.match(run.body.run.output.reply, /^Tuesday then/);
    const bad = await call(url(), 'POST', `/v1/tenants/${TENANT}/turns`, {
      agent: 'a',
      scope: 'steer-http',
      payload: { text: 'x' },
      on_busy: 'barge',
    });
    assert.equal(bad.status, 400);
    assert.match(JSON.stringify(bad.body), /on_busy/);
  });
});
