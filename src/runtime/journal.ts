// A run attempt's journal: the run's entries as stored, and the one fenced checkpoint
// transaction (entries + events + steps/usage/elapsed) that extends them. The entries
// the loop reasons about are exactly what `appendProgress` says it wrote — seq, attempt
// and ts come from the store, never recomputed here.
//
// The loop and the worker reach the run's durable state only through `RunJournalPort`,
// the journal contract below: what a run reads to resume, what it records per round and
// how it ends. Both stores implement it; a test can wrap it (test/helpers/seeded-bugs.ts
// holds entries back to show the crash checks fail when the journal lies).

import { isKeelError } from '../errors.ts';
import type { Metrics } from '../metrics.ts';
import type { Fence, FinalizeInput, PendingSteer, ProgressInput } from '../store/store.ts';
import type { EntryBody, Run, RunEntry, RunFigures } from '../types.ts';
import type { RunEvent } from '../events.ts';
import type { RunControl } from './run-control.ts';
import { RunStopped } from './run-control.ts';

/** The journal contract of a run attempt; every write is fenced by (run_id, attempt). */
export interface RunJournalPort {
  /** Reads to resume: the run's entries in seq order. */
  loadEntries(runId: string): Promise<RunEntry[]>;
  /**
   * Records one round in one transaction: entries, events and the figures; returns the
   * entries as stored. Throws LEASE_LOST when the fence moved.
   */
  appendProgress(fence: Fence, progress: ProgressInput): Promise<RunEntry[]>;
  /** A step boundary: turns steered at the run join it as entries (one transaction). */
  takeSteers(fence: Fence, entryFor: (steer: PendingSteer) => EntryBody): Promise<RunEntry[]>;
  /** The end: status, output, terminal event and its consequences, in one transaction. */
  finalizeRun(fence: Fence, input: FinalizeInput): Promise<Run>;
}

interface JournalDeps {
  journal: RunJournalPort;
  metrics: Metrics;
}

export class RunJournal {
  /** The run's entries in seq order (loaded at the start of the attempt, then appended). */
  entries: RunEntry[] = [];

  private readonly port: RunJournalPort;
  private readonly metrics: Metrics;

  constructor(
    deps: JournalDeps,
    private readonly fence: Fence,
    private readonly control: RunControl,
    private readonly now: () => number,
  ) {
    this.port = deps.journal;
    this.metrics = deps.metrics;
  }

  async load(): Promise<RunEntry[]> {
    this.entries = await this.port.loadEntries(this.fence.run_id);
    return this.entries;
  }

  /** One fenced transaction. A cancel or a lost lease unwinds the attempt (RunStopped). */
  async checkpoint(entries: EntryBody[], events: RunEvent[], figures: RunFigures): Promise<void> {
    const cause = this.control.cause;
    if (cause === 'cancelled' || cause === 'lease_lost') throw new RunStopped(cause);
    const started = this.now();
    const stored = await this.fenced(() =>
      this.port.appendProgress(this.fence, {
        ...(entries.length > 0 && { entries }),
        ...(events.length > 0 && { events }),
        ...figures,
      }),
    );
    this.metrics.checkpointDuration.observe((this.now() - started) / 1000);
    this.entries.push(...stored);
  }

  /**
   * A step boundary: turns steered at this run join the journal as user entries (one
   * fenced transaction, src/runtime/steering.ts). Returns how many it took.
   */
  async takeSteers(entryFor: (steer: PendingSteer) => EntryBody): Promise<number> {
    const cause = this.control.cause;
    if (cause === 'cancelled' || cause === 'lease_lost') throw new RunStopped(cause);
    const taken = await this.fenced(() => this.port.takeSteers(this.fence, entryFor));
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
}
