// The in-process side of change notifications, the same for every backend: listeners
// subscribe, and committed changes reach each of them in commit order. How changes get
// here (after a SQLite commit, or from PostgreSQL's LISTEN) is the backend's business.

import type { ChangeListener, StoreChange } from '../store.ts';

export class ChangeHub {
  private readonly listeners = new Set<ChangeListener>();

  /** Returns an unsubscribe function. */
  subscribe(listener: ChangeListener): () => void {
    // A wrapper per subscription, so subscribing the same function twice is two entries.
    const entry: ChangeListener = (change) => listener(change);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  /** Called only with committed changes. */
  notify(changes: readonly StoreChange[]): void {
    for (const change of changes) {
      for (const listener of [...this.listeners]) {
        try {
          listener(change);
        } catch {
          // A listener's failure is its own; the committed change stands.
        }
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}
