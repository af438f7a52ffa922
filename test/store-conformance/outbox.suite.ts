// The delivery outbox: claim with tokens and expiry, destination prefixes, acks and
// their refusals, retry backoff, and dead rows after max_attempts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Store } from '../../src/store/store.ts';
import type { StoreFactory } from './harness.ts';
import {
  claimOrFail,
  fenceOf,
  rejectsWith,
  StoreHarness,
  succeeded,
  TENANT,
  turn,
} from './harness.ts';
import { resultIdempotencyKey } from '../../src/store/rules/deliveries.ts';

const CLAIM_MS = 30_000;

/** Finalizes one run per destination, each in its own scope; returns the run ids. */
async function deliveriesFor(store: Store, destinations: string[]): Promise<string[]> {
  const runIds: string[] = [];
  for (const [index, destination] of destinations.entries()) {
    await store.enqueueRun(turn({ scope: `d${index}`, delivery: { destination } }));
    const claimed = await claimOrFail(store);
    await store.finalizeRun(fenceOf(claimed), succeeded(`reply ${index}`));
    runIds.push(claimed.run.run_id);
  }
  return runIds;
}

function claim(store: Store, extra: { destination_prefix?: string; max_attempts?: number } = {}) {
  return store.claimDeliveries(TENANT, {
    limit: 10,
    lease_ms: CLAIM_MS,
    max_attempts: extra.max_attempts ?? 10,
    ...(extra.destination_prefix === undefined
      ? {}
      : { destination_prefix: extra.destination_prefix }),
  });
}

async function statusOf(store: Store, runId: string): Promise<string | undefined> {
  return (await store.listDeliveries(TENANT, { run_id: runId }, 1)).items[0]?.status;
}

export function outboxSuite(factory: StoreFactory): void {
  describe('delivery outbox', () => {
    const harness = new StoreHarness(factory);

    it('claims a pending delivery once, with the run output as payload and a token', async () => {
      const { store, clock } = await harness.fresh();
      const [runId] = await deliveriesFor(store, ['tg:42']);
      const [claimed, ...rest] = await claim(store);
      assert.equal(rest.length, 0);
      assert.ok(claimed);
      assert.equal(claimed.run_id, runId);
      assert.equal(claimed.destination, 'tg:42');
      assert.deepEqual(claimed.payload, { reply: 'reply 0' });
      assert.equal(claimed.attempt, 1);
      // One result delivery per run, keyed by the shared rule on both backends.
      assert.equal(claimed.idempotency_key, resultIdempotencyKey(claimed.run_id));
      assert.ok(claimed.claim_token.length >= 16);
      assert.equal(claimed.claim_expires_at, new Date(clock.now() + CLAIM_MS).toISOString());
      assert.deepEqual(await claim(store), []);
      const delivered = await store.ackDelivery(TENANT, claimed.delivery_id, {
        claim_token: claimed.claim_token,
        outcome: 'delivered',
        max_attempts: 10,
      });
      assert.equal(delivered.status, 'delivered');
      assert.equal(delivered.claim_expires_at, null);
      assert.equal(delivered.idempotency_key, claimed.idempotency_key);
      await rejectsWith(
        store.ackDelivery(TENANT, claimed.delivery_id, {
          claim_token: claimed.claim_token,
          outcome: 'delivered',
          max_attempts: 10,
        }),
        'DELIVERY_NOT_CLAIMED',
      );
    });

    it('destination_prefix keeps adapters apart', async () => {
      const { store } = await harness.fresh();
      await deliveriesFor(store, ['tg:1', 'cli:1', 'tg:2', 'cli_x:1']);
      const telegram = await claim(store, { destination_prefix: 'tg:' });
      assert.deepEqual(telegram.map((delivery) => delivery.destination).sort(), ['tg:1', 'tg:2']);
      const cli = await claim(store, { destination_prefix: 'cli:' });
      assert.deepEqual(
        cli.map((delivery) => delivery.destination),
        ['cli:1'],
      );
      const pendingCli = await store.listDeliveries(
        TENANT,
        { destination_prefix: 'cli', status: 'pending' },
        10,
      );
      assert.deepEqual(
        pendingCli.items.map((delivery) => delivery.destination),
        ['cli_x:1'],
      );
    });

    it('an expired claim is handed out again with a new token and attempt + 1; the old token is refused', async () => {
      const { store, clock } = await harness.fresh();
      await deliveriesFor(store, ['tg:1']);
      const [first] = await claim(store);
      assert.ok(first);
      clock.advance(CLAIM_MS);
      await rejectsWith(
        store.ackDelivery(TENANT, first.delivery_id, {
          claim_token: first.claim_token,
          outcome: 'delivered',
          max_attempts: 10,
        }),
        'CLAIM_EXPIRED',
      );
      const [second] = await claim(store);
      assert.ok(second);
      assert.equal(second.delivery_id, first.delivery_id);
      assert.equal(second.attempt, 2);
      assert.notEqual(second.claim_token, first.claim_token);
      assert.equal(second.idempotency_key, first.idempotency_key);
      await rejectsWith(
        store.ackDelivery(TENANT, first.delivery_id, {
          claim_token: first.claim_token,
          outcome: 'delivered',
          max_attempts: 10,
        }),
        'CLAIM_TOKEN_MISMATCH',
      );
      await rejectsWith(
        store.ackDelivery('other-tenant', first.delivery_id, {
          claim_token: second.claim_token,
          outcome: 'delivered',
          max_attempts: 10,
        }),
        'DELIVERY_NOT_FOUND',
      );
      await rejectsWith(
        store.ackDelivery(TENANT, 'no-such-delivery', {
          claim_token: second.claim_token,
          outcome: 'delivered',
          max_attempts: 10,
        }),
        'DELIVERY_NOT_FOUND',
      );
      const delivered = await store.ackDelivery(TENANT, second.delivery_id, {
        claim_token: second.claim_token,
        outcome: 'delivered',
        max_attempts: 10,
      });
      assert.equal(delivered.status, 'delivered');
      assert.equal(delivered.attempt, 2);
    });

    it('retry waits for max(retry_after_ms, backoff) before the row is claimable again', async () => {
      const { store, clock } = await harness.fresh();
      const [runId] = await deliveriesFor(store, ['tg:1', 'tg:2']);
      const claimed = await claim(store);
      const [first, other] = claimed;
      assert.ok(first && other);
      const retried = await store.ackDelivery(TENANT, first.delivery_id, {
        claim_token: first.claim_token,
        outcome: 'retry',
        error: 'HTTP 429',
        retry_after_ms: 10_000,
        max_attempts: 10,
      });
      assert.equal(retried.status, 'pending');
      assert.equal(retried.last_error, 'HTTP 429');
      assert.equal(retried.next_attempt_at, new Date(clock.now() + 10_000).toISOString());
      clock.advance(9_999);
      assert.deepEqual(
        (await claim(store, { destination_prefix: 'tg:1' })).map((d) => d.delivery_id),
        [],
      );
      clock.advance(1);
      const [again] = await claim(store, { destination_prefix: 'tg:1' });
      assert.equal(again?.delivery_id, first.delivery_id);
      assert.equal(again?.attempt, 2);
      // Without retry_after_ms the backoff applies: about 2 s at attempt 2 (±20 %).
      const backedOff = await store.ackDelivery(TENANT, first.delivery_id, {
        claim_token: again?.claim_token ?? '',
        outcome: 'retry',
        max_attempts: 10,
      });
      const wait = Date.parse(backedOff.next_attempt_at) - clock.now();
      assert.ok(wait >= 1600 && wait <= 2400, `backoff ${wait} ms`);
      assert.equal(await statusOf(store, runId ?? ''), 'pending');
      const failedRow = await store.ackDelivery(TENANT, other.delivery_id, {
        claim_token: other.claim_token,
        outcome: 'failed',
        error: 'chat not found',
        max_attempts: 10,
      });
      assert.equal(failedRow.status, 'failed');
      assert.equal(failedRow.last_error, 'chat not found');
      clock.advance(3_600_000);
      assert.deepEqual(
        (await claim(store)).map((delivery) => delivery.destination),
        ['tg:1'],
      );
    });

    it('a row dies after max_attempts of expired claims', async () => {
      const { store, clock } = await harness.fresh();
      const [runId] = await deliveriesFor(store, ['tg:1']);
      assert.equal((await claim(store, { max_attempts: 2 }))[0]?.attempt, 1);
      clock.advance(CLAIM_MS);
      assert.equal((await claim(store, { max_attempts: 2 }))[0]?.attempt, 2);
      clock.advance(CLAIM_MS);
      assert.deepEqual(await claim(store, { max_attempts: 2 }), []);
      assert.equal(await statusOf(store, runId ?? ''), 'dead');
      assert.equal((await store.stats()).deliveries_by_status.dead, 1);
      clock.advance(3_600_000);
      assert.deepEqual(await claim(store, { max_attempts: 2 }), []);
    });

    it('a row dies when a retry is acknowledged at max_attempts', async () => {
      const { store, clock } = await harness.fresh();
      await deliveriesFor(store, ['tg:1']);
      const [first] = await claim(store, { max_attempts: 2 });
      assert.ok(first);
      const pending = await store.ackDelivery(TENANT, first.delivery_id, {
        claim_token: first.claim_token,
        outcome: 'retry',
        max_attempts: 2,
      });
      assert.equal(pending.status, 'pending');
      clock.advance(60_000);
      const [second] = await claim(store, { max_attempts: 2 });
      assert.equal(second?.attempt, 2);
      const dead = await store.ackDelivery(TENANT, first.delivery_id, {
        claim_token: second?.claim_token ?? '',
        outcome: 'retry',
        error: 'still down',
        max_attempts: 2,
      });
      assert.equal(dead.status, 'dead');
      assert.equal(dead.last_error, 'still down');
      clock.advance(3_600_000);
      assert.deepEqual(await claim(store, { max_attempts: 2 }), []);
    });

    it('retryDeadDelivery hands a dead row back, due now with fresh attempts, once', async () => {
      const { store, clock } = await harness.fresh();
      const [deadRun, liveRun] = await deliveriesFor(store, ['tg:1', 'tg:2']);
      const [first] = await claim(store, { destination_prefix: 'tg:1', max_attempts: 1 });
      assert.ok(first);
      await store.ackDelivery(TENANT, first.delivery_id, {
        claim_token: first.claim_token,
        outcome: 'retry',
        error: 'adapter down',
        max_attempts: 1,
      });
      assert.equal(await statusOf(store, deadRun ?? ''), 'dead');
      const other = (await store.listDeliveries(TENANT, { run_id: liveRun ?? '' }, 1)).items[0];
      await rejectsWith(
        store.retryDeadDelivery(TENANT, other?.delivery_id ?? ''),
        'DELIVERY_NOT_DEAD',
      );
      await rejectsWith(
        store.retryDeadDelivery('other-tenant', first.delivery_id),
        'DELIVERY_NOT_FOUND',
      );
      await rejectsWith(store.retryDeadDelivery(TENANT, 'no-such-delivery'), 'DELIVERY_NOT_FOUND');

      clock.advance(1000);
      const retried = await store.retryDeadDelivery(TENANT, first.delivery_id);
      assert.equal(retried.status, 'pending');
      assert.equal(retried.attempt, 0);
      assert.equal(retried.last_error, 'adapter down', 'the last error stays for the operator');
      assert.equal(retried.next_attempt_at, new Date(clock.now()).toISOString());
      await rejectsWith(store.retryDeadDelivery(TENANT, first.delivery_id), 'DELIVERY_NOT_DEAD');
      const [again] = await claim(store, { destination_prefix: 'tg:1', max_attempts: 1 });
      assert.equal(again?.delivery_id, first.delivery_id);
      assert.equal(again?.attempt, 1);
    });

    it('stats counts one tenant or all, with the oldest queued run and failing schedules', async () => {
      const { store, clock } = await harness.fresh();
      await deliveriesFor(store, ['tg:1']);
      const queuedAt = clock.now();
      await store.enqueueRun(turn({ scope: 'waiting' }));
      clock.advance(5000);
      await store.enqueueRun(turn({ scope: 'waiting-too' }));
      const mine = await store.stats(TENANT);
      assert.equal(mine.runs_by_status.queued, 2);
      assert.equal(mine.runs_by_status.succeeded, 1);
      assert.equal(mine.deliveries_by_status.pending, 1);
      assert.equal(mine.oldest_queued_ms, queuedAt);
      assert.equal(mine.schedules_failing, 0);
      const nobody = await store.stats('other-tenant');
      assert.equal(nobody.runs_by_status.queued, 0);
      assert.equal(nobody.oldest_queued_ms, null);
      assert.equal((await store.stats()).runs_by_status.queued, 2);
    });

    it('listDeliveries pages newest first over every row exactly once', async () => {
      const { store } = await harness.fresh();
      const runIds = await deliveriesFor(store, ['tg:1', 'tg:2', 'tg:3', 'tg:4', 'tg:5']);
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.listDeliveries(TENANT, {}, 2, cursor);
        seen.push(...page.items.map((delivery) => delivery.run_id));
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      assert.deepEqual(seen, [...runIds].reverse());
    });
  });
}
