// Seeded bugs (docs/reliability.md, "Seeded bugs"): test-side decorators that each break
// one guarantee on purpose, so the checks guarding it can be shown to fail. They wrap a
// store or the run loop's journal (src/runtime/journal.ts) from the outside; keel's own
// code has no switch for any of them, so no production process can turn one on.
//
//   no_fencing     — a zombie attempt's writes pass: each fenced write is re-addressed to
//                    the run's current attempt (store decorator);
//   split_finalize — finalize in two transactions: the status commits first, then (after
//                    fault point `finalize.between`) the status again with its thread turn
//                    and delivery (store decorator; SQLite);
//   entries_at_end — the loop's entries are held in memory and journaled only when the
//                    run is finalized (journal decorator).

import Database from 'better-sqlite3';
import { KeelError } from '../../src/errors.ts';
import type { Failpoints } from '../../src/failpoints.ts';
import type { KeelOptions } from '../../src/main.ts';
import type { RunJournalPort } from '../../src/runtime/journal.ts';
import type { Fence, FinalizeInput, Store } from '../../src/store/store.ts';
import type { EntryBody, RunEntry } from '../../src/types.ts';

export const SEEDED_BUGS = ['entries_at_end', 'no_fencing', 'split_finalize'] as const;
export type SeededBug = (typeof SEEDED_BUGS)[number];

/** "a,b" → checked names; "" → none. An unknown name is refused (a typo is not "no bug"). */
export function parseSeededBugs(text: string): SeededBug[] {
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = names.filter((name) => !(SEEDED_BUGS as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw new KeelError(
      'CONFIG_INVALID',
      `unknown seeded bug ${unknown.map((name) => `"${name}"`).join(', ')} (known: ${SEEDED_BUGS.join(', ')})`,
    );
  }
  return names as SeededBug[];
}

/** `target` with some methods replaced; every other member answers as the target's. */
function overriding<T extends object>(target: T, methods: Partial<T>): T {
  return new Proxy(target, {
    get(object, property) {
      if (Object.hasOwn(methods, property)) return methods[property as keyof T];
      const value: unknown = Reflect.get(object, property, object);
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });
}

/**
 * no_fencing: a fenced write of any attempt lands while the run is running — the fence
 * is swapped for the current attempt's. Runs are found by the claims made through the
 * wrapper (a zombie worker claimed its run itself); others pass through unchanged.
 */
export function withoutFencing(store: Store): Store {
  const tenants = new Map<string, string>();
  const current = async (fence: Fence): Promise<Fence> => {
    const tenant = tenants.get(fence.run_id);
    const run = tenant === undefined ? null : await store.getRun(tenant, fence.run_id);
    return run?.status === 'running' ? { run_id: fence.run_id, attempt: run.attempt } : fence;
  };
  return overriding(store, {
    async claimNextRun(options) {
      const claimed = await store.claimNextRun(options);
      if (claimed) tenants.set(claimed.run.run_id, claimed.run.tenant);
      return claimed;
    },
    heartbeat: async (fence, leaseMs, elapsedMs) =>
      store.heartbeat(await current(fence), leaseMs, elapsedMs),
    appendProgress: async (fence, progress) => store.appendProgress(await current(fence), progress),
    takeSteers: async (fence, entryFor) => store.takeSteers(await current(fence), entryFor),
    finalizeRun: async (fence, input) => store.finalizeRun(await current(fence), input),
    requestApproval: async (fence, request) => store.requestApproval(await current(fence), request),
  });
}

/**
 * split_finalize on a SQLite store at `path`: the run's status commits alone (its own
 * connection, the store's fence), then `finalize.between` is hit, then the run is
 * reopened and finalized whole. A crash at `finalize.between` leaves a finished run
 * without its thread turn, delivery or terminal event.
 */
export function withSplitFinalize(store: Store, path: string, failpoints: Failpoints): Store {
  let db: Database.Database | null = null;
  const connection = (): Database.Database => {
    db ??= new Database(path);
    db.pragma('busy_timeout = 5000');
    return db;
  };
  const settle = (fence: Fence, input: FinalizeInput): void => {
    const output = input.status === 'succeeded' ? JSON.stringify(input.output) : null;
    const settled = connection()
      .prepare(
        `UPDATE runs SET status = ?, output = ?, finished_at = ?
         WHERE run_id = ? AND status = 'running' AND attempt = ?`,
      )
      .run(input.status, output, Date.now(), fence.run_id, fence.attempt).changes;
    if (settled !== 1) throw new KeelError('LEASE_LOST', `run ${fence.run_id} moved on`);
  };
  const reopen = (fence: Fence): void => {
    connection()
      .prepare(
        `UPDATE runs SET status = 'running', output = NULL, finished_at = NULL
         WHERE run_id = ? AND attempt = ?`,
      )
      .run(fence.run_id, fence.attempt);
  };
  return overriding(store, {
    async finalizeRun(fence, input) {
      settle(fence, input);
      failpoints.hit('finalize.between');
      reopen(fence);
      return store.finalizeRun(fence, input);
    },
    async close() {
      db?.close();
      db = null;
      await store.close();
    },
  });
}

/**
 * entries_at_end: the entries of a run's rounds are held here and journaled only at its
 * finalization; the loop is answered as if they were stored. Events and figures still
 * go through. A crash loses every entry of the attempt, so a resumed run repeats work.
 */
export function withEntriesAtEnd(
  journal: RunJournalPort,
  now: () => number = Date.now,
): RunJournalPort {
  const held = new Map<string, { entries: EntryBody[]; lastSeq: number }>();
  const heldFor = (runId: string): { entries: EntryBody[]; lastSeq: number } | undefined =>
    held.get(runId);
  return {
    async loadEntries(runId) {
      const entries = await journal.loadEntries(runId);
      held.set(runId, { entries: [], lastSeq: entries.at(-1)?.seq ?? 0 });
      return entries;
    },
    async appendProgress(fence, progress) {
      const run = heldFor(fence.run_id);
      const { entries, ...rest } = progress;
      if (!run || !entries?.length) return journal.appendProgress(fence, progress);
      await journal.appendProgress(fence, rest);
      run.entries.push(...entries);
      const ts = new Date(now()).toISOString();
      const { run_id, attempt } = fence;
      return entries.map(
        (entry) => ({ ...entry, run_id, attempt, ts, seq: ++run.lastSeq }) as RunEntry,
      );
    },
    async takeSteers(fence, entryFor) {
      const taken = await journal.takeSteers(fence, entryFor);
      const run = heldFor(fence.run_id);
      const last = taken.at(-1)?.seq;
      if (run && last !== undefined) run.lastSeq = Math.max(run.lastSeq, last);
      return taken;
    },
    async finalizeRun(fence, input) {
      const entries = heldFor(fence.run_id)?.entries ?? [];
      held.delete(fence.run_id);
      if (entries.length > 0) await journal.appendProgress(fence, { entries });
      return journal.finalizeRun(fence, input);
    },
  };
}

/** The wrappers that put `bugs` into a keel (startKeel's wrapStore / wrapJournal). */
export function seededBugOptions(
  bugs: readonly SeededBug[],
  failpoints: Failpoints,
): Pick<KeelOptions, 'wrapStore' | 'wrapJournal'> {
  const on = new Set(bugs);
  return {
    ...((on.has('no_fencing') || on.has('split_finalize')) && {
      wrapStore: (store: Store, url: string): Store => {
        let wrapped = store;
        if (on.has('split_finalize')) {
          if (!url.startsWith('sqlite:'))
            throw new KeelError('CONFIG_INVALID', 'seeded bug split_finalize: SQLite only');
          wrapped = withSplitFinalize(wrapped, url.slice('sqlite:'.length), failpoints);
        }
        return on.has('no_fencing') ? withoutFencing(wrapped) : wrapped;
      },
    }),
    ...(on.has('entries_at_end') && { wrapJournal: withEntriesAtEnd }),
  };
}
