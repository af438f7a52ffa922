// Schedules over HTTP (validation, past at → 400 writing nothing, trigger dedup) and
// the schedule tools' confinement to the calling agent and scope.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { scheduleDeleteTool } from '../src/tools/builtin/schedule-delete.ts';
import { scheduleGetTool } from '../src/tools/builtin/schedule-get.ts';
import { scheduleListTool } from '../src/tools/builtin/schedule-list.ts';
import { schedulePutTool } from '../src/tools/builtin/schedule-put.ts';
import type { AnyToolSpec, ToolContext } from '../src/tools/tool.ts';
import type { ApiServer } from './helpers/api-server.ts';
import { seedTenant, startApiServer } from './helpers/api-server.ts';
import { toolContext } from './helpers/tool-context.ts';

const T = '/v1/tenants/acme';

describe('schedules over HTTP', () => {
  let server: ApiServer;
  before(async () => {
    server = await startApiServer();
    await seedTenant(server, 'acme');
  });
  after(() => server.close());

  it('creates, reads, lists and deletes a cron schedule', async () => {
    const put = await server.request('PUT', `${T}/schedules/daily`, {
      body: {
        agent: 'assistant',
        scope: 'daily',
        payload: { text: 'hi' },
        cron: '0 8 * * *',
        timezone: 'Europe/Berlin',
        delivery: { destination: 'tg:42' },
      },
    });
    assert.equal(put.status, 201, put.text);
    assert.equal(put.body.schedule.misfire, 'run_once');
    assert.equal(put.body.schedule.enabled, true);
    assert.ok(put.body.schedule.next_fire_at);
    assert.equal(put.body.schedule.revision, undefined);
    const again = await server.request('PUT', `${T}/schedules/daily`, {
      body: { agent: 'assistant', scope: 'daily', every_ms: 60_000, enabled: false },
    });
    assert.equal(again.status, 200);
    assert.equal(again.body.schedule.next_fire_at, null);
    assert.equal(
      (await server.request('GET', `${T}/schedules/daily`)).body.schedule.every_ms,
      60_000,
    );
    assert.equal((await server.request('GET', `${T}/schedules`)).body.schedules.length, 1);
    assert.equal((await server.request('DELETE', `${T}/schedules/daily`)).status, 200);
    const gone = await server.request('GET', `${T}/schedules/daily`);
    assert.equal(gone.body.error.code, 'SCHEDULE_NOT_FOUND');
  });

  it('rejects bad timings with 400 and writes nothing', async () => {
    const base = { agent: 'assistant', scope: 's' };
    const bad = [
      { ...base, at: '2000-01-01T00:00:00Z' },
      { ...base, cron: '0 8 * * *' },
      { ...base, cron: '0 8 * * *', timezone: 'Mars/Olympus' },
      { ...base, cron: '0 8 * * *', timezone: '+08:00' },
      { ...base, cron: 'not a cron', timezone: 'UTC' },
      { ...base, every_ms: 999 },
      { ...base, every_ms: 5000, at: '2999-01-01T00:00:00Z' },
      { ...base },
      { ...base, every_ms: 5000, misfire: 'sometimes' },
      { ...base, every_ms: 5000, extra: 1 },
    ];
    for (const body of bad) {
      const response = await server.request('PUT', `${T}/schedules/bad`, { body });
      assert.equal(response.status, 400, JSON.stringify(body));
    }
    const past = await server.request('PUT', `${T}/schedules/bad`, { body: bad[0] });
    assert.match(past.body.error.message, /in the past/);
    assert.equal(await server.store.getSchedule('acme', 'bad'), null);
    const noAgent = await server.request('PUT', `${T}/schedules/bad`, {
      body: { agent: 'nobody', scope: 's', every_ms: 5000 },
    });
    assert.equal(noAgent.body.error.code, 'AGENT_NOT_FOUND');
  });

  it('trigger runs now, deduplicated by request_id', async () => {
    await server.request('PUT', `${T}/schedules/poke`, {
      body: { agent: 'assistant', scope: 'p', payload: { text: 'poke' }, every_ms: 3_600_000 },
    });
    const first = await server.request('POST', `${T}/schedules/poke/trigger`, {
      body: { request_id: 'tr-1' },
    });
    assert.equal(first.status, 202, first.text);
    const second = await server.request('POST', `${T}/schedules/poke/trigger`, {
      body: { request_id: 'tr-1' },
    });
    assert.equal(second.status, 200);
    assert.equal(second.body.run_id, first.body.run_id);
    assert.equal(second.body.deduplicated, true);
    const run = await server.store.getRun('acme', first.body.run_id);
    assert.equal(run?.source, 'schedule');
    assert.deepEqual(run?.input, { text: 'poke' });
    assert.equal((await server.store.getSchedule('acme', 'poke'))?.last_run_id, first.body.run_id);
    const missing = await server.request('POST', `${T}/schedules/nope/trigger`);
    assert.equal(missing.status, 404, missing.text);
  });
});

describe('schedule tools', () => {
  let server: ApiServer;
  const contextFor = (agent: string, scope: string): ToolContext =>
    toolContext({ store: server.store }, { tenant: 'acme', agent, scope, runId: 'r', callId: 'c' });
  before(async () => {
    server = await startApiServer();
    await seedTenant(server, 'acme', 'alice');
    await server.request('PUT', `${T}/agents/bob`, { body: { model: 'fixture/echo' } });
  });
  after(() => server.close());

  async function run(tool: AnyToolSpec, input: unknown, context: ToolContext) {
    const parsed = (tool.input as unknown as { parse(value: unknown): never }).parse(input);
    return (await tool.run(parsed, context)) as Record<string, unknown>;
  }

  it('are confined to the calling agent and scope', async () => {
    const alice = contextFor('alice', 'chat-1');
    const put = await run(
      schedulePutTool,
      { name: 'remind', every_ms: 60_000, payload: { text: 'water' } },
      alice,
    );
    assert.equal((put.schedule as { scope: string }).scope, 'chat-1');
    const stored = await server.store.getSchedule('acme', 'remind');
    assert.equal(stored?.agent, 'alice');

    for (const other of [contextFor('bob', 'chat-1'), contextFor('alice', 'chat-2')]) {
      await assert.rejects(run(scheduleGetTool, { name: 'remind' }, other), {
        code: 'SCHEDULE_NOT_FOUND',
      });
      assert.deepEqual((await run(scheduleListTool, {}, other)).schedules, []);
      assert.deepEqual(await run(scheduleDeleteTool, { name: 'remind' }, other), {
        deleted: false,
      });
      await assert.rejects(run(schedulePutTool, { name: 'remind', every_ms: 1000 }, other), {
        code: 'SCHEDULE_NOT_FOUND',
      });
    }
    const unchanged = await server.store.getSchedule('acme', 'remind');
    assert.equal(unchanged?.every_ms, 60_000);
    assert.equal(unchanged?.agent, 'alice');
    // The tool schema has no agent or scope to pass at all.
    assert.throws(() =>
      (schedulePutTool.input as unknown as { parse(v: unknown): never }).parse({
        name: 'x',
        every_ms: 1000,
        agent: 'bob',
      }),
    );
    await assert.rejects(
      run(schedulePutTool, { name: 'late', at: '2000-01-01T00:00:00Z' }, alice),
      { code: 'VALIDATION_FAILED' },
    );
    assert.equal((await run(scheduleListTool, {}, alice)).schedules instanceof Array, true);
    assert.deepEqual(await run(scheduleDeleteTool, { name: 'remind' }, alice), { deleted: true });
  });
});
