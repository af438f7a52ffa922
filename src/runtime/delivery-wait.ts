// Long poll for the outbox: claims now, and if nothing was due, claims again each time
// the store reports a run of the tenant finalized (that is when deliveries are written)
// or that notifications may have been missed, until something is claimed or the wait
// ends. Deliveries that become due by time alone (a retry's backoff, an expired claim)
// send no notification: a fallback claim every `recheckMs` finds them, as the run
// worker's poll finds expired run leases.

import type { DeliveryClaimInput, DeliveryStore, StoreChanges } from '../store/store.ts';
import type { ClaimedDelivery } from '../types.ts';

export async function claimDeliveriesWaiting(
  store: DeliveryStore & StoreChanges,
  tenant: string,
  input: DeliveryClaimInput,
  waitMs: number,
  signal?: AbortSignal,
  recheckMs = 1000,
): Promise<ClaimedDelivery[]> {
  let pending = false;
  let wake: () => void = () => undefined;
  // Subscribe before the first claim so a run finishing in between is not missed.
  const unsubscribe = store.subscribe((change) => {
    if (
      ((change.kind === 'run.terminal' || change.kind === 'delivery.due') &&
        change.tenant === tenant) ||
      change.kind === 'store.resync'
    ) {
      pending = true;
      wake();
    }
  });
  let over = false;
  const end = (): void => {
    over = true;
    wake();
  };
  const timer = setTimeout(end, waitMs);
  const recheck = setInterval(() => {
    pending = true;
    wake();
  }, recheckMs);
  signal?.addEventListener('abort', end);
  try {
    for (;;) {
      pending = false;
      const deliveries = await store.claimDeliveries(tenant, input);
      if (deliveries.length > 0 || over || waitMs === 0) return deliveries;
      // A notification that landed during the claim gets its own claim.
      if (!pending) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = () => undefined;
      }
      if (over) return [];
    }
  } finally {
    clearTimeout(timer);
    clearInterval(recheck);
    signal?.removeEventListener('abort', end);
    unsubscribe();
  }
}
