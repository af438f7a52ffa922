// GET T/usage and PATCH T limits over HTTP (docs/http-api.md, Usage and budgets): the
// query is validated (400 naming the field), groups come from the usage ledger, a
// tenant past its daily budget gets 429 BUDGET_EXCEEDED with Retry-After for a new turn
// (nothing written) while other tenants go on.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { agentSpec } from './store-conformance/harness.ts';
import type { ApiServer } from './helpers/api-server.ts';
import { startApiServer } from './helpers/api-server.ts';

const today = (): string => new Date().toISOString().slice(0, 10);

describe('usage and budgets over HTTP', () => {
  let server: ApiServer;
  before(async () => {
    server = await startApiServer();
    for (const tenant of ['t1', 't2']) {
      await server.store.createTenant(tenant, {});
      await server.store.putAgent(tenant, 'assistant', agentSpec());
    }
  });
  after(() => server.close());

  /** One model response of `tokens` input tokens journaled for a new run of t1. */
  async function spend(scope: string, tokens: number): Promise<string> {
    const accepted = await server.request('POST', '/v1/tenants/t1/turns', {
      body: { agent: 'assistant', scope, payload: { text: 'hi' } },
    });
    assert.equal(accepted.status, 202, accepted.text);
    const claimed = await server.store.claimNextRun({ owner: 'test', lease_ms: 30_000 });
    assert.ok(claimed);
    const fence = { run_id: claimed.run.run_id, attempt: claimed.run.attempt };
    const usage = { input_tokens: tokens, output_tokens: 0 };
    await server.store.appendProgress(fence, {
      events: [{ type: 'model.response', data: { step: 1, usage, model: 'p/m', cost_usd: 0.01 } }],
    });
    return claimed.run.run_id;
  }

  it('validates the query and names the field', async () => {
    const cases: [string, RegExp][] = [
      ['group_by=tenant', /querystring\.group_by/],
      ['from=2026-13-01', /querystring\.from/],
      ['to=yesterday', /querystring\.to/],
      ['from=2026-02-02&to=2026-02-01', /querystring\.from: 2026-02-02 is after to/],
      ['from=2020-01-01&to=2026-01-01', /querystring\.from: the range spans/],
      ['limit=5', /querystring\.limit/],
    ];
    for (const [query, message] of cases) {
      const response = await server.request('GET', `/v1/tenants/t1/usage?${query}`);
      assert.equal(response.status, 400, query);
      assert.match(response.body.error.message, message, query);
    }
    const patch = await server.request('PATCH', '/v1/tenants/t1', {
      body: { limits: { daily_tokens: -1 } },
    });
    assert.equal(patch.status, 400);
    assert.match(patch.body.error.message, /body\.limits\.daily_tokens/);
    const missing = await server.request('GET', '/v1/tenants/nobody/usage');
    assert.equal(missing.status, 404);
  });

  it('groups the ledger by agent, model, day, thread and run', async () => {
    const runId = await spend('s1', 40);
    const byModel = await server.request('GET', '/v1/tenants/t1/usage?group_by=model');
    assert.equal(byModel.status, 200);
    assert.equal(byModel.body.to, today());
    assert.equal(byModel.body.group_by, 'model');
    assert.deepEqual(
      byModel.body.groups.map((g: { key: string; total_tokens: number }) => [
        g.key,
        g.total_tokens,
      ]),
      [['p/m', 40]],
    );
    assert.equal(byModel.body.total.model_calls, 1);
    assert.equal(byModel.body.total.cost_usd, 0.01);
    const t = today();
    for (const [groupBy, key] of [
      ['agent', 'assistant'],
      ['day', t],
      ['thread', 'assistant/s1'],
      ['run', runId],
    ]) {
      const response = await server.request(
        'GET',
        `/v1/tenants/t1/usage?from=${t}&to=${t}&group_by=${groupBy}`,
      );
      assert.equal(response.body.groups[0]?.key, key, groupBy);
    }
    const other = await server.request('GET', '/v1/tenants/t2/usage');
    assert.equal(other.body.total.total_tokens, 0);
  });

  it('a daily budget refuses new turns with 429 BUDGET_EXCEEDED + Retry-After; others go on', async () => {
    const set = await server.request('PATCH', '/v1/tenants/t1', {
      body: { limits: { daily_tokens: 100 } },
    });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.body.tenant.limits, { daily_tokens: 100, daily_cost_usd: null });
    const read = await server.request('GET', '/v1/tenants/t1');
    assert.deepEqual(read.body.tenant.limits, { daily_tokens: 100, daily_cost_usd: null });
    await spend('s2', 60); // 40 + 60 = 100: used up
    const runsBefore = (await server.store.listRuns('t1', {}, 200)).items.length;
    const refused = await server.request('POST', '/v1/tenants/t1/turns', {
      body: { agent: 'assistant', scope: 's3', payload: { text: 'hi' } },
    });
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.body.error.code, 'BUDGET_EXCEEDED');
    assert.match(refused.body.error.message, /daily_tokens/);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.equal((await server.store.listRuns('t1', {}, 200)).items.length, runsBefore);
    const elsewhere = await server.request('POST', '/v1/tenants/t2/turns', {
      body: { agent: 'assistant', scope: 's3', payload: { text: 'hi' } },
    });
    assert.equal(elsewhere.status, 202);
    const usage = await server.request('GET', '/v1/tenants/t1/usage');
    assert.deepEqual(usage.body.limits, { daily_tokens: 100, daily_cost_usd: null });
    // Only the admin sets limits; null removes one and new turns are accepted again.
    const cleared = await server.request('PATCH', '/v1/tenants/t1', {
      body: { limits: { daily_tokens: null, daily_cost_usd: 5 } },
    });
    assert.deepEqual(cleared.body.tenant.limits, { daily_tokens: null, daily_cost_usd: 5 });
    const accepted = await server.request('POST', '/v1/tenants/t1/turns', {
      body: { agent: 'assistant', scope: 's3', payload: { text: 'hi' } },
    });
    assert.equal(accepted.status, 202);
  });
});
