// Live-only run events (`model.delta`): never stored, fanned out in process to whoever
// listens (the SSE route). Persisted events reach listeners through store.subscribe.

import type { LiveEvent } from './events.ts';

type LiveListener = (event: LiveEvent) => void;

export interface LiveEvents {
  publish(runId: string, event: LiveEvent): void;
  /** Returns an unsubscribe function. */
  subscribe(runId: string, listener: LiveListener): () => void;
}

export function createLiveEvents(): LiveEvents {
  const listeners = new Map<string, Set<LiveListener>>();
  return {
    publish(runId, event) {
      for (const listener of listeners.get(runId) ?? []) {
        try {
          listener(event);
        } catch {
          // A broken listener (a closed SSE socket) must not break the run.
        }
      }
    },
    subscribe(runId, listener) {
      let set = listeners.get(runId);
      if (!set) {
        set = new Set();
        listeners.set(runId, set);
      }
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(runId);
      };
    },
  };
}
