// The retention pruner ([retention], docs/configuration.md): every interval_ms, a pass
// over the finished runs past each configured age, in bounded batches — each batch its
// own short transaction (src/store/rules/retention.ts), with a turn of the event loop
// between batches so runs' writes go on meanwhile. Runs in every process that works
// runs; on PostgreSQL the store lets one process prune at a time.

import { setImmediate as nextTurn } from 'node:timers/promises';
import type { RetentionSettings } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { RetentionCursor, RetentionPart } from '../store/rules/retention.ts';
import { RETENTION_PARTS } from '../store/rules/retention.ts';
import type { RetentionStore } from '../store/store.ts';

const DAY_MS = 86_400_000;

/** Per part, how long after a run finished it is pruned; 0 = kept forever. */
export type RetentionAges = Record<RetentionPart, number>;

export function retentionAges(settings: RetentionSettings): RetentionAges {
  return {
    events: settings.events_days * DAY_MS,
    entries: settings.entries_days * DAY_MS,
    runs: settings.runs_days * DAY_MS,
  };
}

export interface RetentionPass {
  /** Rows deleted per part (journal rows; runs for `runs`). */
  deleted: RetentionAges;
  /** Transactions the pass took. */
  batches: number;
  /** Rows any one batch deleted, at most. */
  largest_batch: number;
}

export interface RunRetention {
  start(): void;
  /** Ends the pass under way after its current batch and stops the timer. */
  stop(): Promise<void>;
  /** One pass now (tests and the timer); a pass already under way is awaited instead. */
  pass(): Promise<RetentionPass>;
}

export interface RunRetentionOptions {
  store: RetentionStore;
  ages: RetentionAges;
  batchRows: number;
  intervalMs: number;
  logger: Logger;
}

export function createRunRetention(options: RunRetentionOptions): RunRetention {
  const { store, ages, batchRows, intervalMs, logger } = options;
  // Where the journal walks stand: nothing is appended to a finished run, so a run the
  // walk has passed stays pruned and the next pass starts after it (a restart walks once
  // from the oldest). The `runs` walk starts over every pass: a run it skipped (a
  // delivery still to deliver) may be deletable later.
  const journalCursors: Partial<Record<RetentionPart, RetentionCursor | null>> = {};
  let timer: NodeJS.Timeout | null = null;
  let current: Promise<RetentionPass> | null = null;
  let stopping = false;

  /** Returns false when another process prunes (PostgreSQL): this pass ends. */
  async function prunePart(part: RetentionPart, pass: RetentionPass): Promise<boolean> {
    let after = part === 'runs' ? null : (journalCursors[part] ?? null);
    for (;;) {
      const result = await store.pruneRunHistory({
        part,
        older_than_ms: ages[part],
        limit: batchRows,
        after,
      });
      pass.batches += 1;
      pass.deleted[part] += result.deleted;
      pass.largest_batch = Math.max(pass.largest_batch, result.deleted);
      after = result.last;
      if (part !== 'runs') journalCursors[part] = after;
      if (result.busy) return false;
      if (!result.more || stopping) return true;
      await nextTurn();
    }
  }

  async function runPass(): Promise<RetentionPass> {
    const pass: RetentionPass = {
      deleted: { events: 0, entries: 0, runs: 0 },
      batches: 0,
      largest_batch: 0,
    };
    // Journals first: a run is deleted only once its journal is gone.
    for (const part of RETENTION_PARTS) {
      if (ages[part] > 0 && !stopping && !(await prunePart(part, pass))) break;
    }
    const { events, entries, runs } = pass.deleted;
    if (events + entries + runs > 0) {
      logger.info({ ...pass.deleted, batches: pass.batches }, 'retention: pruned run history');
    }
    return pass;
  }

  function pass(): Promise<RetentionPass> {
    current ??= runPass().finally(() => {
      current = null;
    });
    return current;
  }

  function schedule(): void {
    if (stopping) return;
    timer = setTimeout(() => {
      pass()
        .catch((error: unknown) => logger.warn({ err: error }, 'retention pass failed'))
        .finally(schedule);
    }, intervalMs);
    timer.unref();
  }

  return {
    start() {
      if (RETENTION_PARTS.every((part) => ages[part] === 0)) return;
      stopping = false;
      schedule();
    },
    async stop() {
      stopping = true;
      if (timer) clearTimeout(timer);
      timer = null;
      await current?.catch(() => undefined);
    },
    pass,
  };
}
