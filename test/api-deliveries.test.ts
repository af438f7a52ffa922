// The delivery outbox over HTTP: list, claim with a lease, ack with the claim token.
// Each test reads and changes the deliveries of a tenant of its own, so they pass in any
// order and alone.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { emptyUsage } from '../src/types.ts';
import type { ApiServer } from './helpers/api-server.ts';
import { seedTenant, startApiServer, storeSnapshot } from './helpers/api-server.ts';

async function succeedWithDelivery(
  server: ApiServer,
  tenant: string,
  destination: string,
): Promise<string> {
  const turn = await server.request('POST', `/v1/tenants/${tenant}/turns`, {
    body: {
      agent: 'assistant',
      scope: destination,
      payload: { text: 'ping' },
      delivery: { destination },
    },
  });
  assert.equal(turn.status, 202);
  const claimed = await server.store.claimNextRun({ owner: 'test', lease_ms: 30_000 });
  assert.ok(claimed);
  assert.equal(claimed.run.run_id, turn.body.run_id);
  await server.store.finalizeRun(
    { run_id: turn.body.run_id, attempt: claimed.run.attempt },
    {
      status: 'succeeded',
      output: { reply: `pong ${destination}` },
      reply_text: 'pong',
      steps: 1,
      usage: emptyUsage(),
      elapsed_ms: 1,
      context_window: 20,
    },
  );
  return turn.body.run_id;
}

describe('deliveries', () => {
  let server: ApiServer;
  let tenantToken: string;
  before(async () => {
    server = await startApiServer();
    await seedTenant(server, 'demo');
    ({ token: tenantToken } = await seedTenant(server, 'claiming'));
    await seedTenant(server, 'defaults');
    await seedTenant(server, 'waiting');
    for (const destination of ['tg:1', 'tg:2', 'mail:3']) {
      await succeedWithDelivery(server, 'demo', destination);
    }
    await succeedWithDelivery(server, 'claiming', 'tg:1');
    await succeedWithDelivery(server, 'claiming', 'tg:2');
    await succeedWithDelivery(server, 'defaults', 'mail:3');
  });
  after(async () => server.close());

  it('lists with filters and paging', async () => {
    const all = await server.request('GET', '/v1/tenants/demo/deliveries');
    assert.equal(all.status, 200);
    assert.equal(all.body.deliveries.length, 3);
    const telegram = await server.request(
      'GET',
      '/v1/tenants/demo/deliveries?destination_prefix=tg:&status=pending',
    );
    assert.equal(telegram.body.deliveries.length, 2);
    const firstPage = await server.request('GET', '/v1/tenants/demo/deliveries?limit=2');
    assert.equal(firstPage.body.deliveries.length, 2);
    assert.ok(firstPage.body.next_cursor);
    const secondPage = await server.request(
      'GET',
      `/v1/tenants/demo/deliveries?limit=2&cursor=${encodeURIComponent(firstPage.body.next_cursor)}`,
    );
    const ids = [...firstPage.body.deliveries, ...secondPage.body.deliveries].map(
      (delivery: { delivery_id: string }) => delivery.delivery_id,
    );
    assert.equal(new Set(ids).size, 3);
    const bad = await server.request('GET', '/v1/tenants/demo/deliveries?status=lost');
    assert.equal(bad.body.error.code, 'VALIDATION_FAILED');
  });

  it('claims with a lease and acks with the claim token (tenant token)', async () => {
    const claim = await server.request('POST', '/v1/tenants/claiming/deliveries/claim', {
      token: tenantToken,
      body: { limit: 5, destination_prefix: 'tg:', lease_ms: 5000 },
    });
    assert.equal(claim.status, 200, claim.text);
    assert.equal(claim.body.deliveries.length, 2);
    const [first, second] = claim.body.deliveries;
    assert.match(first.payload.reply, /^pong tg:/);
    assert.ok(first.claim_token && first.idempotency_key && first.claim_expires_at);

    const before = await storeSnapshot(server.store);
    const mismatch = await server.request(
      'POST',
      `/v1/tenants/claiming/deliveries/${first.delivery_id}/ack`,
      { token: tenantToken, body: { claim_token: 'wrong', outcome: 'delivered' } },
    );
    assert.equal(mismatch.status, 409);
    assert.equal(mismatch.body.error.code, 'CLAIM_TOKEN_MISMATCH');
    assert.equal(await storeSnapshot(server.store), before);

    const acked = await server.request(
      'POST',
      `/v1/tenants/claiming/deliveries/${first.delivery_id}/ack`,
      { token: tenantToken, body: { claim_token: first.claim_token, outcome: 'delivered' } },
    );
    assert.equal(acked.status, 200, acked.text);
    assert.equal(acked.body.delivery.status, 'delivered');

    const retry = await server.request(
      'POST',
      `/v1/tenants/claiming/deliveries/${second.delivery_id}/ack`,
      {
        body: {
          claim_token: second.claim_token,
          outcome: 'retry',
          error: 'telegram 502',
          retry_after_ms: 1000,
        },
      },
    );
    assert.equal(retry.status, 200, retry.text);
    assert.equal(retry.body.delivery.status, 'pending');

    const notClaimed = await server.request(
      'POST',
      `/v1/tenants/claiming/deliveries/${first.delivery_id}/ack`,
      { body: { claim_token: first.claim_token, outcome: 'delivered' } },
    );
    assert.equal(notClaimed.status, 409);
    const unknown = await server.request(
      'POST',
      '/v1/tenants/claiming/deliveries/01900000-0000-7000-8000-000000000000/ack',
      { body: { claim_token: 'x', outcome: 'delivered' } },
    );
    assert.equal(unknown.body.error.code, 'DELIVERY_NOT_FOUND');
  });

  it('an empty claim body uses the defaults; bad bodies are named', async () => {
    const claim = await server.request('POST', '/v1/tenants/defaults/deliveries/claim');
    assert.equal(claim.status, 200);
    assert.equal(claim.body.deliveries.length, 1);
    assert.equal(claim.body.deliveries[0].destination, 'mail:3');
    const cases: Array<[unknown, string]> = [
      [{ limit: 0 }, 'body.limit'],
      [{ limit: 101 }, 'body.limit'],
      [{ lease_ms: 999 }, 'body.lease_ms'],
      [{ lease_ms: 600_001 }, 'body.lease_ms'],
      [{ batch: 1 }, 'body.batch'],
    ];
    for (const [body, field] of cases) {
      const response = await server.request('POST', '/v1/tenants/defaults/deliveries/claim', {
        body,
      });
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.ok(response.body.error.message.includes(field), response.body.error.message);
    }
    const badOutcome = await server.request(
      'POST',
      `/v1/tenants/defaults/deliveries/${claim.body.deliveries[0].delivery_id}/ack`,
      { body: { claim_token: claim.body.deliveries[0].claim_token, outcome: 'maybe' } },
    );
    assert.ok(badOutcome.body.error.message.includes('body.outcome'));
  });

  it('wait_ms: a claim with nothing due waits and is woken by the run finalizing', async () => {
    const empty = await server.request('POST', '/v1/tenants/waiting/deliveries/claim', {
      body: { wait_ms: 1 },
    });
    assert.equal(empty.status, 200, empty.text);
    assert.deepEqual(empty.body.deliveries, []);
    // A minute's wait: only a store notification can end it before the test's own timeout.
    const waiting = server.request('POST', '/v1/tenants/waiting/deliveries/claim', {
      body: { wait_ms: 60_000, destination_prefix: 'tg:' },
    });
    const runId = await succeedWithDelivery(server, 'waiting', 'tg:9');
    const claim = await waiting;
    assert.equal(claim.status, 200, claim.text);
    assert.equal(claim.body.deliveries.length, 1);
    assert.equal(claim.body.deliveries[0].run_id, runId);
    // agentd's adapter acks with explicit nulls.
    const acked = await server.request(
      'POST',
      `/v1/tenants/waiting/deliveries/${claim.body.deliveries[0].delivery_id}/ack`,
      {
        body: {
          claim_token: claim.body.deliveries[0].claim_token,
          outcome: 'delivered',
          error: null,
          retry_after_ms: null,
        },
      },
    );
    assert.equal(acked.status, 200, acked.text);
    assert.equal(acked.body.delivery.status, 'delivered');
    const bad = await server.request('POST', '/v1/tenants/waiting/deliveries/claim', {
      body: { wait_ms: 120_001 },
    });
    assert.equal(bad.status, 400);
    assert.ok(bad.body.error.message.includes('body.wait_ms'), bad.body.error.message);
  });
});
