// keel's own delivery worker for `webhook:<name>` destinations. It drains the outbox
// with the same claim/ack rules every adapter uses (src/store/rules/deliveries.ts):
// claim with destination_prefix "webhook:", POST, ack delivered / retry / failed; the
// store's rules do the backoff and turn the last retry into `dead`. Woken by a webhook
// delivery becoming due (a run's result, an approval request) and by a timer set to the
// next due retry of each tenant; a periodic sweep picks up claims a crashed process left
// behind.

import type { Logger } from '../../logger.ts';
import type { DeliveryStore, StoreChanges, TenantStore, WebhookStore } from '../../store/store.ts';
import type { ClaimedDelivery } from '../../types.ts';
import type { SendSettings, WebhookAck } from './send.ts';
import { sendWebhook } from './send.ts';

export const WEBHOOK_PREFIX = 'webhook:';
const CLAIM_BATCH = 10;
/** Longer than one POST may take: a claim does not expire while its POST is in flight. */
const SWEEP_MS = 30_000;

export type WebhookWorkerStore = DeliveryStore &
  WebhookStore &
  StoreChanges &
  Pick<TenantStore, 'listTenants'>;

export interface WebhookWorkerOptions {
  store: WebhookWorkerStore;
  logger: Logger;
  settings: SendSettings;
  max_attempts: number;
}

export interface WebhookWorker {
  start(): void;
  stop(): Promise<void>;
}

export function createWebhookWorker(options: WebhookWorkerOptions): WebhookWorker {
  const { store, logger, settings } = options;
  const leaseMs = settings.timeout_ms * 2 + 5_000;
  const running = new Map<string, Promise<void>>();
  const again = new Set<string>();
  const dueTimers = new Map<string, NodeJS.Timeout>();
  let sweep: NodeJS.Timeout | null = null;
  let unsubscribe: (() => void) | null = null;
  let stopped = false;

  async function deliverOne(tenant: string, delivery: ClaimedDelivery): Promise<void> {
    const name = delivery.destination.slice(WEBHOOK_PREFIX.length);
    const webhook = await store.getWebhook(tenant, name);
    const ack: WebhookAck = webhook
      ? await sendWebhook(webhook, delivery, settings)
      : { outcome: 'failed', error: `no webhook named "${name}"` };
    await store.ackDelivery(tenant, delivery.delivery_id, {
      claim_token: delivery.claim_token,
      ...ack,
      max_attempts: options.max_attempts,
    });
  }

  /** Claims and sends until nothing is due, then sets the timer for the next retry. */
  async function drain(tenant: string): Promise<void> {
    for (;;) {
      if (stopped) return;
      const claimed = await store.claimDeliveries(tenant, {
        limit: CLAIM_BATCH,
        lease_ms: leaseMs,
        destination_prefix: WEBHOOK_PREFIX,
        max_attempts: options.max_attempts,
      });
      if (claimed.length === 0) break;
      await Promise.all(
        claimed.map((delivery) =>
          deliverOne(tenant, delivery).catch((error: unknown) => {
            // The claim expires and the delivery is retried by the next pass.
            logger.warn({ tenant, delivery_id: delivery.delivery_id, err: error }, 'webhook ack');
          }),
        ),
      );
    }
    await armNextDue(tenant);
  }

  async function armNextDue(tenant: string): Promise<void> {
    const page = await store.listDeliveries(
      tenant,
      { status: 'pending', destination_prefix: WEBHOOK_PREFIX },
      200,
    );
    const next = Math.min(...page.items.map((item) => Date.parse(item.next_attempt_at)));
    clearTimeout(dueTimers.get(tenant));
    dueTimers.delete(tenant);
    if (!Number.isFinite(next) || stopped) return;
    const timer = setTimeout(() => wake(tenant), Math.max(0, next - Date.now()) + 5);
    timer.unref();
    dueTimers.set(tenant, timer);
  }

  /** One drain per tenant at a time; a wake during a drain runs one more after it. */
  function wake(tenant: string): void {
    if (stopped) return;
    if (running.has(tenant)) {
      again.add(tenant);
      return;
    }
    const pass = drain(tenant)
      .catch((error: unknown) => logger.warn({ tenant, err: error }, 'webhook delivery pass'))
      .finally(() => {
        running.delete(tenant);
        if (again.delete(tenant)) wake(tenant);
      });
    running.set(tenant, pass);
  }

  async function wakeAll(): Promise<void> {
    const tenants = await store.listTenants().catch(() => []);
    for (const tenant of tenants) wake(tenant.name);
  }

  return {
    start() {
      unsubscribe = store.subscribe((change) => {
        // Only a delivery for a webhook: a turn without one (or for Telegram) costs this
        // worker nothing, not a claim transaction and a list per run.
        if (
          change.kind === 'delivery.due' &&
          (change.destination === undefined || change.destination.startsWith(WEBHOOK_PREFIX))
        )
          wake(change.tenant);
        if (change.kind === 'store.resync') void wakeAll();
      });
      sweep = setInterval(() => void wakeAll(), SWEEP_MS);
      sweep.unref();
      void wakeAll();
    },
    async stop() {
      stopped = true;
      unsubscribe?.();
      if (sweep) clearInterval(sweep);
      for (const timer of dueTimers.values()) clearTimeout(timer);
      dueTimers.clear();
      await Promise.all(running.values());
    },
  };
}
