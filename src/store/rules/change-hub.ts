// The in-process side of change notifications, the same for every backend: listeners
// subscribe, and committed changes reach each of them in commit order. How changes get
// here (after a SQLite commit, or from PostgreSQL's LISTEN) is the backend's business.
//
// A listener may watch one run: it then hears only that run's changes and those about
// no run (store.resync above all). A turn's long poll is such a listener, and a turn
// commits about a dozen changes, so with every waiter hearing every change the cost of
// a change grew with the number of turns in flight (3.6 % of a turn's CPU with 64).

import type { ChangeListener, StoreChange } from '../store.ts';

export class ChangeHub {
  private readonly everyChange = new Set<ChangeListener>();
  private readonly byRun = new Map<string, Set<ChangeListener>>();

  /** Returns an unsubscribe function. With `runId`, only that run's changes and run-less ones. */
  subscribe(listener: ChangeListener, runId?: string): () => void {
    // A wrapper per subscription, so subscribing the same function twice is two entries.
    const entry: ChangeListener = (change) => listener(change);
    if (runId === undefined) {
      this.everyChange.add(entry);
      return () => {
        this.everyChange.delete(entry);
      };
    }
    let watchers = this.byRun.get(runId);
    if (!watchers) {
      watchers = new Set();
      this.byRun.set(runId, watchers);
    }
    watchers.add(entry);
    const ownWatchers = watchers;
    return () => {
      ownWatchers.delete(entry);
      if (ownWatchers.size === 0 && this.byRun.get(runId) === ownWatchers) this.byRun.delete(runId);
    };
  }

  /** Called only with committed changes. */
  notify(changes: readonly StoreChange[]): void {
    for (const change of changes) {
      // Copies: a listener may subscribe or unsubscribe while it is called.
      const listeners = [...this.everyChange];
      if (change.run_id === null) {
        for (const watchers of this.byRun.values())
          for (const watcher of watchers) listeners.push(watcher);
      } else {
        const watchers = this.byRun.get(change.run_id);
        if (watchers) for (const watcher of watchers) listeners.push(watcher);
      }
      for (const listener of listeners) {
        try {
          listener(change);
        } catch {
          // A listener's failure is its own; the committed change stands.
        }
      }
    }
  }

  clear(): void {
    this.everyChange.clear();
    this.byRun.clear();
  }
}
