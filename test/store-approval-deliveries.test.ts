// Approval requests through the outbox (docs/approvals.md, "Delivery of the request") on
// both backends: a turn with a delivery destination leaves one `approval` delivery per
// call it asks about, written in the request's transaction, claimable with the call's
// tool and arguments, next to the run's single `result` delivery; a turn without a
// destination leaves none; the request and the result wake claimers of their destination
// (`delivery.due`), and nothing wakes them when no delivery was written.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { webhookBody } from '../src/channels/webhooks/send.ts';
import type { StoreChange } from '../src/store/store.ts';
import type { StoreFactory } from './store-conformance/harness.ts';
import {
  claimOrFail,
  fenceOf,
  StoreHarness,
  succeeded,
  TENANT,
  turn,
} from './store-conformance/harness.ts';
import { postgresFactory, sqliteFactory } from './helpers/store-factories.ts';
import { skipUnlessPostgres } from './helpers/postgres.ts';

const CLAIM = { limit: 10, lease_ms: 60_000, max_attempts: 5 };

function request(callId: string) {
  return {
    step: 1,
    call: { call_id: callId, name: 'sink_write', arguments: `{"value":"${callId}"}` },
    timeout_ms: 60_000,
  };
}

function suite(factory: StoreFactory): void {
  const harness = new StoreHarness(factory);

  it('each approval of a turn with a destination is one approval delivery; the result is one more', async () => {
    const { store } = await harness.fresh();
    const changes: StoreChange[] = [];
    const unsubscribe = store.subscribe((change) => changes.push(change));
    const { run } = await store.enqueueRun(turn({ delivery: { destination: 'tg:42' } }));
    await store.requestApproval(fenceOf(await claimOrFail(store)), request('c1'));
    assert.deepEqual(
      changes.filter((change) => change.kind === 'delivery.due'),
      [{ kind: 'delivery.due', tenant: TENANT, run_id: run.run_id, destination: 'tg:42' }],
      'the request wakes claimers of its destination',
    );
    const [first, ...none] = await store.claimDeliveries(TENANT, CLAIM);
    assert.deepEqual(none, []);
    assert.equal(first?.kind, 'approval');
    assert.equal(first?.call_id, 'c1');
    assert.equal(first?.run_id, run.run_id);
    assert.equal(first?.destination, 'tg:42');
    assert.equal(first?.idempotency_key, `run:${run.run_id}:approval:c1`);
    assert.equal(first?.payload.call_id, 'c1');
    assert.equal(first?.payload.tool, 'sink_write');
    assert.equal(first?.payload.arguments, '{"value":"c1"}');
    assert.equal(first?.payload.step, 1);
    assert.equal(typeof first?.payload.expires_at, 'string');
    // The webhook channel POSTs it as an approval request carrying the call.
    const body = JSON.parse(webhookBody(first, TENANT, new Date(0)));
    assert.equal(body.type, 'run.approval_requested');
    assert.equal(body.data.approval.tool, 'sink_write');
    assert.equal(body.data.approval.call_id, 'c1');
    assert.equal(body.data.output, undefined);
    await store.ackDelivery(TENANT, first.delivery_id, {
      claim_token: first.claim_token,
      outcome: 'delivered',
      max_attempts: 5,
    });

    // Approved; the resumed attempt asks about a second call: a second approval delivery.
    await store.decideApproval(TENANT, run.run_id, 'c1', { decision: 'approve', note: null });
    await store.requestApproval(fenceOf(await claimOrFail(store)), request('c2'));
    await store.decideApproval(TENANT, run.run_id, 'c2', { decision: 'deny', note: 'no' });
    const resumed = await claimOrFail(store);
    changes.length = 0;
    await store.finalizeRun(fenceOf(resumed), succeeded('done'));
    // The result delivery wakes its destination's claimers too (the webhook worker
    // listens for this, not for every finished run).
    assert.deepEqual(
      changes.filter((change) => change.kind === 'delivery.due'),
      [{ kind: 'delivery.due', tenant: TENANT, run_id: run.run_id, destination: 'tg:42' }],
    );

    const claimed = await store.claimDeliveries(TENANT, CLAIM);
    assert.deepEqual(claimed.map((delivery) => [delivery.kind, delivery.call_id]).sort(), [
      ['approval', 'c2'],
      ['result', null],
    ]);
    const result = claimed.find((delivery) => delivery.kind === 'result');
    assert.deepEqual(result?.payload, { reply: 'done' });
    assert.equal(result?.idempotency_key, `run:${run.run_id}:delivery`);
    const listed = await store.listDeliveries(TENANT, { run_id: run.run_id }, 10);
    assert.equal(listed.items.length, 3);
    assert.deepEqual(
      listed.items.map((delivery) => `${delivery.kind}:${delivery.call_id ?? '-'}`).sort(),
      ['approval:c1', 'approval:c2', 'result:-'],
    );
    unsubscribe();
  });

  it('a turn without a destination leaves no approval delivery', async () => {
    const { store } = await harness.fresh();
    const changes: StoreChange[] = [];
    const unsubscribe = store.subscribe((change) => changes.push(change));
    const { run } = await store.enqueueRun(turn());
    await store.requestApproval(fenceOf(await claimOrFail(store)), request('c1'));
    await store.decideApproval(TENANT, run.run_id, 'c1', { decision: 'approve', note: null });
    await store.finalizeRun(fenceOf(await claimOrFail(store)), succeeded('done'));
    unsubscribe();
    assert.deepEqual(
      changes.filter((change) => change.kind === 'delivery.due'),
      [],
      'nothing due, nobody woken',
    );
    assert.deepEqual(await store.claimDeliveries(TENANT, CLAIM), []);
    assert.equal((await store.listDeliveries(TENANT, { run_id: run.run_id }, 10)).items.length, 0);
  });

  it('a request fenced out (lease lost) leaves no delivery either', async () => {
    const { store } = await harness.fresh();
    const { run } = await store.enqueueRun(turn({ delivery: { destination: 'tg:42' } }));
    const claimed = await claimOrFail(store);
    await store.cancelRun(TENANT, run.run_id, 'stop');
    await assert.rejects(store.requestApproval(fenceOf(claimed), request('c1')));
    assert.deepEqual(await store.claimDeliveries(TENANT, CLAIM), []);
  });
}

const sqlite = sqliteFactory();
describe('approval deliveries [sqlite]', () => {
  after(() => sqlite.cleanup());
  suite(sqlite);
});

const skip = await skipUnlessPostgres('test/store-approval-deliveries.test.ts');
const postgres = postgresFactory('keel_apdl');
describe('approval deliveries [postgres]', { skip: skip || false }, () => {
  after(() => postgres.cleanup());
  if (!skip) suite(postgres);
});
