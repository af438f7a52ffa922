// A run attempt's journal: the run's entries as stored, and the one fenced checkpoint
// transaction (entries + events + steps/usage/elapsed) that extends them. The entries
// the loop reasons about are exactly what `appendProgress` says it wrote — seq, attempt
// and ts come from the store, never recomputed here.

import { isKeelError } from '../errors.ts';
import type { Metrics } from '../metrics.ts';
import type { Fence, PendingSteer, RunBranchStore, RunStore } from '../store/store.ts';
import type { EntryBody, RunEntry, RunFigures } from '../types.ts';
import type { RunEvent } from './events.ts';
import type { RunControl } from './run-control.ts';
import { RunStopped } from './run-control.ts';

type JournalStore = Pick<RunStore, 'appendProgress' | 'loadEntries'> &
  Pick<RunBranchStore, 'takeSteers'>;

interface JournalDeps {
  store: JournalStore;
  metrics: Metrics;
  /** Test-only switches (config.seeded_bugs); `entries_at_end` holds entries back. */
  seededBugs?: readonly string[];
}

export class RunJournal {
  /** The run's entries in seq order (loaded at the start of the attempt, then appended). */
  entries: RunEntry[] = [];
  /** Seeded bug `entries_at_end`: entries held here instead of being journaled. */
  private readonly held: EntryBody[] | null;

  private readonly store: JournalStore;
  private readonly metrics: Metrics;

  constructor(
    deps: JournalDeps,
    private readonly fence: Fence,
    private readonly control: RunControl,
    private readonly now: () => number,
  ) {
    this.store = deps.store;
    this.metrics = deps.metrics;
    this.held = deps.seededBugs?.includes('entries_at_end') ? [] : null;
  }

  async load(): Promise<RunEntry[]> {
    this.entries = await this.store.loadEntries(this.fence.run_id);
    return this.entries;
  }

  /** One fenced transaction. A cancel or a lost lease unwinds the attempt (RunStopped). */
  async checkpoint(entries: EntryBody[], events: RunEvent[], figures: RunFigures): Promise<void> {
    const cause = this.control.cause;
    if (cause === 'cancelled' || cause === 'lease_lost') throw new RunStopped(cause);
    const started = this.now();
    const journaled = this.held ? [] : entries;
    this.held?.push(...entries);
    const stored = await this.fenced(() =>
      this.store.appendProgress(this.fence, {
        ...(journaled.length > 0 && { entries: journaled }),
        ...(events.length > 0 && { events }),
        ...figures,
      }),
    );
    this.metrics.checkpointDuration.observe((this.now() - started) / 1000);
    this.entries.push(...(this.held ? this.asIfStored(entries) : stored));
  }

  /**
   * A step boundary: turns steered at this run join the journal as user entries (one
   * fenced transaction, src/runtime/steering.ts). Returns how many it took.
   */
  async takeSteers(entryFor: (steer: PendingSteer) => EntryBody): Promise<number> {
    const cause = this.control.cause;
    if (cause === 'cancelled' || cause === 'lease_lost') throw new RunStopped(cause);
    const taken = await this.fenced(() => this.store.takeSteers(this.fence, entryFor));
    this.entries.push(...taken);
    return taken.length;
  }

  /** A fenced write: LEASE_LOST stops the attempt (RunStopped). */
  private async fenced<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (isKeelError(error, 'LEASE_LOST')) {
        this.control.stop('lease_lost');
        throw new RunStopped('lease_lost');
      }
      throw error;
    }
  }

  /** Seeded bug `entries_at_end` only: the held entries, written at the very end. */
  async flushHeld(): Promise<void> {
    if (!this.held?.length) return;
    await this.store.appendProgress(this.fence, { entries: this.held.splice(0) });
  }

  /** Seeded bug `entries_at_end` only: held entries as the loop would see them stored. */
  private asIfStored(entries: EntryBody[]): RunEntry[] {
    const ts = new Date(this.now()).toISOString();
    const last = this.entries[this.entries.length - 1]?.seq ?? 0;
    const { run_id, attempt } = this.fence;
    return entries.map((entry, i) => ({ ...entry, run_id, attempt, ts, seq: last + i + 1 }));
  }
}
