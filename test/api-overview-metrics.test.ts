// The overview's figures and /metrics come from one function (src/api/overview-figures.ts):
// with a queued run waiting and a failing schedule, `GET /v1/overview` and the gauges
// `keel_queue_depth`, `keel_oldest_queued_age_seconds`, `keel_schedules_failing` and
// `keel_deliveries{status="dead"}` agree, and fall back together when the backlog clears.
// Also the console's sign-in probe, GET /v1/whoami, with each kind of token and tokenless.

import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { ApiServer } from './helpers/api-server.ts';
import { seedTenant, startApiServer } from './helpers/api-server.ts';

function gauge(text: string, name: string): number {
  const match = new RegExp(`^${name.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text);
  assert.ok(match, `${name} is exported`);
  return Number(match[1]);
}

describe('overview figures and /metrics agree', () => {
  let server: ApiServer;
  before(async () => {
    server = await startApiServer();
    await seedTenant(server, 'demo');
  });
  after(async () => server.close());

  async function both() {
    const overview = (await server.request('GET', '/v1/overview')).body;
    const metrics = (await server.request('GET', '/metrics')).text;
    return {
      overview,
      metrics: {
        queue_depth: gauge(metrics, 'keel_queue_depth'),
        oldest_queued_age_s: gauge(metrics, 'keel_oldest_queued_age_seconds'),
        schedules_failing: gauge(metrics, 'keel_schedules_failing'),
        deliveries_dead: gauge(metrics, 'keel_deliveries{status="dead"}'),
      },
    };
  }

  it('queue depth, oldest queued age, failing schedules and dead deliveries', async () => {
    const idle = await both();
    assert.equal(idle.overview.oldest_queued_age_ms, null);
    assert.deepEqual(idle.metrics, {
      queue_depth: 0,
      oldest_queued_age_s: 0,
      schedules_failing: 0,
      deliveries_dead: 0,
    });

    // No worker runs in this server: the turn stays queued and ages.
    const turn = await server.request('POST', '/v1/tenants/demo/turns', {
      body: { agent: 'assistant', scope: 'waiting', payload: { text: 'x' } },
    });
    assert.equal(turn.status, 202);
    // A schedule whose agent is deleted records last_error: a failing schedule.
    await server.request('PUT', '/v1/tenants/demo/agents/doomed', {
      body: { model: 'fixture/echo' },
    });
    const schedule = await server.request('PUT', '/v1/tenants/demo/schedules/nightly', {
      body: { agent: 'doomed', scope: 'cron', every_ms: 3_600_000, payload: { text: 'tick' } },
    });
    assert.ok(schedule.status < 300, schedule.text);
    assert.equal((await server.request('DELETE', '/v1/tenants/demo/agents/doomed')).status, 200);
    await delay(300);

    const busy = await both();
    console.log(
      `overview ${JSON.stringify({ q: busy.overview.queue_depth, age_ms: busy.overview.oldest_queued_age_ms, failing: busy.overview.schedules_failing })} vs metrics ${JSON.stringify(busy.metrics)}`,
    );
    assert.equal(busy.metrics.queue_depth, busy.overview.queue_depth);
    assert.equal(busy.overview.queue_depth, 1);
    assert.equal(busy.metrics.schedules_failing, busy.overview.schedules_failing);
    assert.equal(busy.overview.schedules_failing, 1);
    assert.equal(busy.metrics.deliveries_dead, busy.overview.deliveries_dead);
    // The same age, read a moment apart: the scrape comes after the overview.
    const ageMs = busy.overview.oldest_queued_age_ms as number;
    assert.ok(ageMs >= 250, `${ageMs} ms`);
    const scrapedMs = busy.metrics.oldest_queued_age_s * 1000;
    assert.ok(scrapedMs >= ageMs && scrapedMs - ageMs < 5000, `${scrapedMs} vs ${ageMs}`);

    // The tenant's own overview reports the same backlog.
    const tenant = (await server.request('GET', '/v1/tenants/demo/overview')).body;
    assert.equal(tenant.queue_depth, 1);
    assert.equal(tenant.schedules_failing, 1);

    // Cancelled: nothing queued any more, and both say so.
    const cancel = await server.request('POST', `/v1/tenants/demo/runs/${turn.body.run_id}/cancel`);
    assert.equal(cancel.status, 200, cancel.text);
    const cleared = await both();
    assert.equal(cleared.overview.oldest_queued_age_ms, null);
    assert.equal(cleared.metrics.oldest_queued_age_s, 0);
    assert.equal(cleared.metrics.queue_depth, 0);
  });
});

describe('GET /v1/whoami (the console asks it before anything else)', () => {
  let server: ApiServer;
  let tokenless: ApiServer;
  before(async () => {
    server = await startApiServer();
    tokenless = await startApiServer({ adminToken: null });
  });
  after(async () => {
    await server.close();
    await tokenless.close();
  });

  it('names the admin, the tenant of a tenant token, refuses no token, and is admin when tokenless', async () => {
    const { token } = await seedTenant(server, 'acme');
    assert.deepEqual((await server.request('GET', '/v1/whoami')).body, {
      kind: 'admin',
      tenant: null,
    });
    assert.deepEqual((await server.request('GET', '/v1/whoami', { token })).body, {
      kind: 'tenant',
      tenant: 'acme',
    });
    const anonymous = await server.request('GET', '/v1/whoami', { token: null });
    assert.equal(anonymous.status, 401);
    const wrong = await server.request('GET', '/v1/whoami', { token: 'not-a-token' });
    assert.equal(wrong.status, 401);
    // Tokenless loopback mode: the console needs no sign-in.
    const open = await tokenless.request('GET', '/v1/whoami', { token: null });
    assert.deepEqual(open.body, { kind: 'admin', tenant: null });
  });
});
