// Memory over REST and the memory-maintenance preset: status codes, the error shape,
// validation that names the field and writes nothing, `search` as a reserved id.

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApi } from '../src/api/app.ts';
import { loadConfig } from '../src/config.ts';
import { createHashEmbedder } from '../src/memory/embedders/hash.ts';
import { createMemoryService } from '../src/memory/service.ts';
import { createMetrics } from '../src/metrics.ts';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import type { Store } from '../src/store/store.ts';

let app: FastifyInstance;
let store: Store;
let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'keel-memory-api-'));
  const config = loadConfig({ data_dir: dir, listen: '127.0.0.1:0' }, {}, dir);
  store = await openSqliteStore({ path: join(dir, 'keel.db'), durability: 'process' });
  const memory = createMemoryService({ store, embedder: createHashEmbedder() });
  app = await buildApi({
    config,
    store,
    logger: pino({ level: 'silent' }),
    metrics: createMetrics(),
    memory,
  });
  await store.createTenant('acme', {});
  await store.createTenant('other', {});
});
after(async () => {
  await app.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

async function call(
  method: string,
  url: string,
  body?: unknown,
  // Tests read response bodies loosely; `any` keeps assertions short and is test-only.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<{ status: number; body: any }> {
  const response = await app.inject({
    method: method as 'GET',
    url,
    // A state-changing request names its content type even without a body.
    headers: {
      host: '127.0.0.1',
      ...(method === 'GET' ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { payload: body as object }),
  });
  return { status: response.statusCode, body: response.json() };
}

const T = '/v1/tenants/acme/memory';

describe('memory REST', () => {
  it('PUT creates (201) then replaces (200); GET reads; DELETE removes; missing → 404', async () => {
    const created = await call('PUT', `${T}/default/pet`, {
      text: 'my dog Rex is a golden retriever',
      metadata: { source: 'chat' },
    });
    assert.equal(created.status, 201);
    assert.equal(created.body.fact.id, 'pet');
    assert.deepEqual(created.body.fact.metadata, { source: 'chat' });
    const replaced = await call('PUT', `${T}/default/pet`, { text: 'my dog Rex is old now' });
    assert.equal(replaced.status, 200);
    const read = await call('GET', `${T}/default/pet`);
    assert.equal(read.status, 200);
    assert.equal(read.body.fact.text, 'my dog Rex is old now');
    assert.equal((await call('GET', `/v1/tenants/other/memory/default/pet`)).status, 404);
    assert.equal((await call('DELETE', `${T}/default/pet`)).status, 200);
    const missing = await call('GET', `${T}/default/pet`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'MEMORY_NOT_FOUND');
    assert.equal((await call('DELETE', `${T}/default/pet`)).body.error.code, 'MEMORY_NOT_FOUND');
  });

  it('search returns fused results with both ranks; "search" is not a valid id', async () => {
    await call('PUT', `${T}/notes/a`, { text: 'the quarterly report is due on friday' });
    await call('PUT', `${T}/notes/b`, { text: 'buy oat milk and bread' });
    const found = await call(
      'GET',
      `${T}/notes/search?q=${encodeURIComponent('report friday')}&limit=5`,
    );
    assert.equal(found.status, 200);
    assert.equal(found.body.results[0].id, 'a');
    assert.deepEqual(Object.keys(found.body.results[0]).sort(), [
      'id',
      'lexical_rank',
      'score',
      'semantic_rank',
      'text',
    ]);
    const reserved = await call('PUT', `${T}/notes/search`, { text: 'x' });
    assert.equal(reserved.status, 400);
    assert.match(reserved.body.error.message, /reserved/);
    const noQuery = await call('GET', `${T}/notes/search`);
    assert.equal(noQuery.status, 400);
    assert.match(noQuery.body.error.message, /q/);
    assert.equal((await call('DELETE', `${T}/notes/search`)).status, 400);
    const badLimit = await call('GET', `${T}/notes/search?q=x&limit=500`);
    assert.equal(badLimit.status, 400);
    assert.match(badLimit.body.error.message, /limit/);
  });

  it('mode asks one side alone; an unknown mode is a 400 naming mode', async () => {
    await call('PUT', `${T}/modes/a`, { text: 'invoice 4471 from the roofer is due' });
    await call('PUT', `${T}/modes/b`, { text: 'invoice 4417 from the electrician is paid' });
    await call('PUT', `${T}/modes/c`, { text: 'the cat sleeps on the sofa' });
    const q = encodeURIComponent('invoice 4471');
    const lexical = await call('GET', `${T}/modes/search?q=${q}&mode=lexical`);
    assert.equal(lexical.status, 200);
    assert.deepEqual(
      lexical.body.results.map((hit: { id: string }) => hit.id),
      ['a', 'b'],
    );
    for (const hit of lexical.body.results) assert.equal(hit.semantic_rank, null);
    const semantic = await call('GET', `${T}/modes/search?q=${q}&mode=semantic`);
    assert.equal(semantic.status, 200);
    assert.equal(semantic.body.results.length, 3);
    for (const hit of semantic.body.results) assert.equal(hit.lexical_rank, null);
    const fused = await call('GET', `${T}/modes/search?q=${q}`);
    assert.equal(fused.body.results[0].id, 'a');
    assert.equal(fused.body.results[0].lexical_rank, 1);
    assert.notEqual(fused.body.results[0].semantic_rank, null);
    const bad = await call('GET', `${T}/modes/search?q=${q}&mode=fuzzy`);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'VALIDATION_FAILED');
    assert.match(bad.body.error.message, /mode/);
    // Nothing written, server up.
    assert.equal((await call('GET', `${T}/modes`)).body.items.length, 3);
  });

  it('validation errors name the field and write nothing', async () => {
    const cases: [string, unknown, RegExp][] = [
      ['big', { text: 'a'.repeat(4097) }, /text/],
      ['blank', { text: '  ' }, /text/],
      ['notext', { metadata: {} }, /text/],
      ['meta', { text: 'ok', metadata: [1] }, /metadata/],
      ['extra', { text: 'ok', colour: 'red' }, /colour/],
    ];
    for (const [id, body, field] of cases) {
      const response = await call('PUT', `${T}/checks/${id}`, body);
      assert.equal(response.status, 400, id);
      assert.match(response.body.error.message, field, id);
      assert.equal((await call('GET', `${T}/checks/${id}`)).status, 404, id);
    }
    const badId = await call('PUT', `${T}/checks/${encodeURIComponent('a b')}`, { text: 'ok' });
    assert.equal(badId.status, 400);
    assert.match(badId.body.error.message, /id/);
    const badNamespace = await call('PUT', `/v1/tenants/acme/memory/Bad_NS/x`, { text: 'ok' });
    assert.equal(badNamespace.status, 400);
    assert.match(badNamespace.body.error.message, /namespace/);
    assert.deepEqual((await call('GET', `${T}/checks`)).body.items, []);
    // exactly 4096 bytes is accepted
    assert.equal((await call('PUT', `${T}/checks/max`, { text: 'é'.repeat(2048) })).status, 201);
  });

  it('a fact of only control characters or with a lone surrogate is a 400 naming text, nothing written', async () => {
    const cases: [string, string, RegExp][] = [
      ['ctl', '\u0001\u0002\u0003', /^text: must not contain control characters/],
      // A NUL is refused as the body is parsed, in every field (src/api/text-checks.ts).
      ['ctl-mixed', 'rex\u0000is a dog', /^body\.text: the value must not contain NUL/],
      ['invisible', '\u200b\u200d', /^text: must contain a visible character/],
      ['surrogate', 'my dog \ud800 Rex', /^text: must be well-formed Unicode/],
    ];
    for (const [id, text, message] of cases) {
      // Sent as JSON text so the lone surrogate arrives as the escape \ud800.
      const put = await call('PUT', `${T}/default/${id}`, JSON.stringify({ text }));
      assert.equal(put.status, 400, `${id}: ${JSON.stringify(put.body)}`);
      assert.equal(put.body.error.code, 'VALIDATION_FAILED');
      assert.match(put.body.error.message, message);
      assert.equal((await call('GET', `${T}/default/${id}`)).status, 404, id);
    }
    // Tabs, newlines and paired surrogates (emoji) are fine.
    const fine = await call('PUT', `${T}/default/fine`, { text: 'rex\tis 🐕\nold' });
    assert.equal(fine.status, 201);
    assert.equal(fine.body.fact.text, 'rex\tis 🐕\nold');
  });

  it('lists with a keyset cursor bound to the namespace', async () => {
    for (const id of ['k1', 'k2', 'k3'])
      await call('PUT', `${T}/paged/${id}`, { text: `fact ${id}` });
    const first = await call('GET', `${T}/paged?limit=2`);
    assert.deepEqual(
      first.body.items.map((item: { id: string }) => item.id),
      ['k1', 'k2'],
    );
    const second = await call('GET', `${T}/paged?limit=2&cursor=${first.body.next_cursor}`);
    assert.deepEqual(
      second.body.items.map((item: { id: string }) => item.id),
      ['k3'],
    );
    assert.equal(second.body.next_cursor, null);
    const foreign = await call('GET', `${T}/notes?cursor=${first.body.next_cursor}`);
    assert.equal(foreign.status, 400);
    assert.equal(foreign.body.error.code, 'VALIDATION_FAILED');
  });
});

describe('memory-maintenance preset', () => {
  const P = '/v1/tenants/acme/presets/memory-maintenance';

  it('installs the maintainer and a disabled weekly schedule, idempotently', async () => {
    const needsModel = await call('POST', P, {});
    assert.equal(needsModel.status, 400);
    assert.match(needsModel.body.error.message, /model/);
    assert.equal(await store.getAgent('acme', 'memory-maintainer'), null);

    const first = await call('POST', P, { model: 'fixture/echo' });
    assert.equal(first.status, 201);
    assert.deepEqual(first.body.agent.allowed_families, ['memory']);
    assert.equal(first.body.schedule.enabled, false);
    assert.equal(first.body.schedule.cron, '0 3 * * 0');
    assert.equal(first.body.schedule.agent, 'memory-maintainer');

    // The operator enables the schedule with an ordinary update; re-applying keeps it.
    const enabled = await call('PUT', '/v1/tenants/acme/schedules/memory-maintenance', {
      agent: 'memory-maintainer',
      scope: 'memory-maintenance/default',
      payload: { namespace: 'default' },
      cron: '0 4 * * 0',
      timezone: 'UTC',
      enabled: true,
    });
    assert.equal(enabled.status, 200, JSON.stringify(enabled.body));
    const again = await call('POST', P);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.status, 200);
    assert.deepEqual(again.body.created, { agent: false, schedule: false });
    assert.equal(again.body.agent.model, 'fixture/echo');
    assert.equal(again.body.schedule.enabled, true);
    assert.equal(again.body.schedule.cron, '0 4 * * 0');
  });

  it('refuses (409, nothing written) when the name belongs to another kind of agent', async () => {
    await store.putAgent('other', 'memory-maintainer', {
      model: 'fixture/echo',
      max_steps: 4,
      timeout_ms: 10_000,
      tool_timeout_ms: 1000,
      temperature: 0,
      max_tokens: 100,
      context_window: 0,
      on_uncertain_effect: 'tell_model',
    });
    const response = await call('POST', '/v1/tenants/other/presets/memory-maintenance', {
      model: 'fixture/echo',
    });
    assert.equal(response.status, 409);
    assert.equal(await store.getSchedule('other', 'memory-maintenance'), null);
  });
});
