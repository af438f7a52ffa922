// When keel's webhook worker looks at the outbox: only when a delivery for a webhook
// becomes due (or a timer, a sweep, a resync says so). A finished run without a delivery,
// or with one for another channel, costs it nothing — before, every succeeded run made it
// run a claim transaction and list the tenant's pending deliveries. A `delivery.due` from
// another process that carries no destination still wakes it. A real store is not needed
// here: the store's side (which changes a commit sends) is checked on both backends in
// store-approval-deliveries.test.ts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { createWebhookWorker } from '../src/channels/webhooks/worker.ts';
import type { WebhookWorkerStore } from '../src/channels/webhooks/worker.ts';
import type { StoreChange } from '../src/store/store.ts';
import { waitFor } from './helpers/wait-for.ts';

function fakeStore() {
  const listeners = new Set<(change: StoreChange) => void>();
  const claims: string[] = [];
  const store = {
    subscribe(listener: (change: StoreChange) => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    listTenants: async () => [],
    claimDeliveries: async (tenant: string) => {
      claims.push(tenant);
      return [];
    },
    listDeliveries: async () => ({ items: [], next_cursor: null }),
  } as unknown as WebhookWorkerStore;
  const emit = (change: StoreChange): void => {
    for (const listener of listeners) listener(change);
  };
  return { store, claims, emit };
}

const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 50));

describe('webhook worker wake-ups', () => {
  it('claims only for a due webhook delivery, not for every finished run', async () => {
    const { store, claims, emit } = fakeStore();
    const worker = createWebhookWorker({
      store,
      logger: pino({ level: 'silent' }),
      settings: { timeout_ms: 1000 } as never,
      max_attempts: 3,
    });
    worker.start();
    try {
      await settle();
      emit({ kind: 'run.terminal', tenant: 't', run_id: 'r1', status: 'succeeded' });
      emit({ kind: 'delivery.due', tenant: 't', run_id: 'r1', destination: 'tg:42' });
      await settle();
      assert.deepEqual(claims, [], 'no delivery for a webhook: no claim');

      emit({ kind: 'delivery.due', tenant: 't', run_id: 'r2', destination: 'webhook:hook' });
      await waitFor('a claim for the webhook delivery', () => claims.length === 1);
      emit({ kind: 'delivery.due', tenant: 'u', run_id: 'r3' });
      await waitFor('a claim when the destination is unknown', () => claims.length === 2);
      assert.deepEqual(claims, ['t', 'u']);
    } finally {
      await worker.stop();
    }
  });
});
