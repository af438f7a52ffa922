// Long poll for a run: returns as soon as the store reports the run terminal (a change
// notification, not a polling interval), or when the timeout passes.

import type { RunStore, StoreChanges } from '../store/store.ts';
import type { Run } from '../types.ts';
import { isTerminal } from '../types.ts';

interface WaitResult {
  run: Run;
  timed_out: boolean;
}

export async function waitForRun(
  store: Pick<RunStore, 'getRun'> & StoreChanges,
  tenant: string,
  runId: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<WaitResult | null> {
  let wake: () => void = () => undefined;
  const woken = new Promise<void>((resolve) => {
    wake = resolve;
  });
  // Subscribe before the first read so a run finishing in between is not missed.
  const unsubscribe = store.subscribe((change) => {
    if (change.kind === 'run.terminal' && change.run_id === runId) wake();
    // The terminal notification may have been missed while the store was away.
    if (change.kind === 'store.resync') {
      void store
        .getRun(tenant, runId)
        .then((run) => {
          if (run && isTerminal(run.status)) wake();
        })
        .catch(() => undefined);
    }
  }, runId);
  const timer = setTimeout(wake, timeoutMs);
  const onAbort = (): void => wake();
  signal?.addEventListener('abort', onAbort);
  // An already aborted signal never fires 'abort': the caller is gone before the wait.
  if (signal?.aborted) wake();
  try {
    const first = await store.getRun(tenant, runId);
    if (!first) return null;
    if (isTerminal(first.status) || timeoutMs === 0) {
      return { run: first, timed_out: !isTerminal(first.status) };
    }
    await woken;
    const latest = (await store.getRun(tenant, runId)) ?? first;
    return { run: latest, timed_out: !isTerminal(latest.status) };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    unsubscribe();
  }
}
