// Per-tenant limits over real HTTP: the request-rate token bucket and the queued-run
// limit answer 429 RATE_LIMITED with Retry-After, write nothing, and leave other
// tenants alone (store-level fairness: src/store/conformance/fairness.suite.ts).

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { KeelConfig } from '../src/config.ts';
import { agentSpec } from './store-conformance/harness.ts';
import type { ApiServer } from './helpers/api-server.ts';
import { startApiServer } from './helpers/api-server.ts';

async function serverWith(limits: Partial<KeelConfig['tenant_limits']>): Promise<ApiServer> {
  const probe = await startApiServer();
  const tenantLimits = { ...probe.config.tenant_limits, ...limits };
  await probe.close();
  const server = await startApiServer({ config: { tenant_limits: tenantLimits } });
  for (const tenant of ['t1', 't2']) {
    await server.store.createTenant(tenant, {});
    await server.store.putAgent(tenant, 'assistant', agentSpec());
  }
  return server;
}

describe('per-tenant limits over HTTP', () => {
  const servers: ApiServer[] = [];
  after(async () => {
    for (const server of servers) await server.close();
  });

  it('over its request rate a tenant gets 429 RATE_LIMITED + Retry-After; others do not', async () => {
    const server = await serverWith({ requests_per_s: 0.01, request_burst: 3 });
    servers.push(server);
    // A caller without a valid token is refused before it can spend t1's tokens.
    const anonymous = await server.request('GET', '/v1/tenants/t1/runs', { token: 'nope' });
    assert.equal(anonymous.status, 401);
    const statuses: number[] = [];
    for (let index = 0; index < 3; index += 1) {
      statuses.push((await server.request('GET', '/v1/tenants/t1/runs')).status);
    }
    assert.deepEqual(statuses, [200, 200, 200]);
    const limited = await server.request('GET', '/v1/tenants/t1/runs');
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error.code, 'RATE_LIMITED');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1, 'Retry-After in seconds');
    assert.equal((await server.request('GET', '/v1/tenants/t2/runs')).status, 200);
    // Routes outside a tenant are not counted against it.
    assert.equal((await server.request('GET', '/v1/tenants')).status, 200);
  });

  it('past tenant_limits.queued_runs an enqueue is 429 RATE_LIMITED and writes nothing', async () => {
    const server = await serverWith({ queued_runs: 2 });
    servers.push(server);
    const turn = (scope: string, requestId?: string) => ({
      body: {
        agent: 'assistant',
        scope,
        payload: { text: 'hi' },
        ...(requestId ? { request_id: requestId } : {}),
      },
    });
    assert.equal(
      (await server.request('POST', '/v1/tenants/t1/turns', turn('a', 'r-a'))).status,
      202,
    );
    assert.equal((await server.request('POST', '/v1/tenants/t1/turns', turn('b'))).status, 202);
    const refused = await server.request('POST', '/v1/tenants/t1/turns', turn('c'));
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, 'RATE_LIMITED');
    assert.match(refused.body.error.message, /queued_runs/);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    // A replay of an accepted request still answers with its run.
    const replay = await server.request('POST', '/v1/tenants/t1/turns', turn('a', 'r-a'));
    assert.equal(replay.status, 200);
    assert.equal((await server.request('POST', '/v1/tenants/t2/turns', turn('a'))).status, 202);
    const runs = await server.request('GET', '/v1/tenants/t1/runs');
    assert.equal(runs.body.runs.length, 2);
  });

  it('a fork counts against tenant_limits.queued_runs like a turn: 429, nothing written', async () => {
    const server = await serverWith({ queued_runs: 2 });
    servers.push(server);
    const turn = (scope: string) => ({
      body: { agent: 'assistant', scope, payload: { text: 'hi' } },
    });
    const source = await server.request('POST', '/v1/tenants/t1/turns', turn('src'));
    // The source gets its user entry as a worker's claim would journal it.
    const claimed = await server.store.claimNextRun({ owner: 'w', lease_ms: 60_000 });
    assert.equal(claimed?.run.run_id, source.body.run_id);
    const fence = { run_id: source.body.run_id as string, attempt: claimed?.run.attempt ?? 1 };
    await server.store.appendProgress(fence, {
      entries: [{ kind: 'user', body: { text: 'hi', payload: { text: 'hi' } } }],
      steps: 0,
      usage: { input_tokens: 0, output_tokens: 0, model_calls: 0, tool_calls: 0 },
    });
    const forkPath = `/v1/tenants/t1/runs/${source.body.run_id}/fork`;
    assert.equal((await server.request('POST', forkPath, { body: { at_step: 0 } })).status, 202);
    assert.equal((await server.request('POST', '/v1/tenants/t1/turns', turn('b'))).status, 202);
    const refused = await server.request('POST', forkPath, { body: { at_step: 0 } });
    assert.equal(refused.status, 429, JSON.stringify(refused.body));
    assert.equal(refused.body.error.code, 'RATE_LIMITED');
    assert.match(refused.body.error.message, /queued_runs/);
    const runs = await server.request('GET', '/v1/tenants/t1/runs');
    assert.equal(runs.body.runs.length, 3, 'the source, one fork, one turn');
  });

  it('past tenant_limits.schedules a new schedule is 403 QUOTA_EXCEEDED and writes nothing', async () => {
    const server = await serverWith({ schedules: 2 });
    servers.push(server);
    const doc = (scope: string) => ({
      body: { agent: 'assistant', scope, payload: { text: 'hi' }, every_ms: 60_000 },
    });
    assert.equal(
      (await server.request('PUT', '/v1/tenants/t1/schedules/s1', doc('a'))).status,
      201,
    );
    assert.equal(
      (await server.request('PUT', '/v1/tenants/t1/schedules/s2', doc('b'))).status,
      201,
    );
    const refused = await server.request('PUT', '/v1/tenants/t1/schedules/s3', doc('c'));
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'QUOTA_EXCEEDED');
    assert.equal(
      (await server.request('PUT', '/v1/tenants/t1/schedules/s2', doc('b2'))).status,
      200,
    );
    assert.equal((await server.request('GET', '/v1/tenants/t1/schedules/s3')).status, 404);
  });

  it('a list page stops at tenant_limits.list_page_bytes and pages on with next_cursor', async () => {
    const server = await serverWith({ list_page_bytes: 65_536 });
    servers.push(server);
    const big = 'x'.repeat(30_000);
    const ids: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      const accepted = await server.request('POST', '/v1/tenants/t1/turns', {
        body: { agent: 'assistant', scope: `s${index}`, payload: { text: big } },
      });
      ids.push(accepted.body.run_id as string);
    }
    const seen: string[] = [];
    const pageSizes: number[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor === null ? '' : `&cursor=${cursor}`;
      const page = await server.request('GET', `/v1/tenants/t1/runs?limit=50${query}`);
      assert.equal(page.status, 200);
      assert.ok(page.text.length <= 65_536 + 1024, `page of ${page.text.length} bytes`);
      pageSizes.push(page.body.runs.length);
      seen.push(...page.body.runs.map((run: { run_id: string }) => run.run_id));
      cursor = page.body.next_cursor;
    } while (cursor !== null);
    console.log(`list_page_bytes 65536, 5 runs of 30 kB: page sizes ${pageSizes.join(', ')}`);
    assert.deepEqual([...seen].sort(), [...ids].sort(), 'every run exactly once');
    assert.ok(pageSizes.length > 1, 'the budget split the list');
  });
});
