// The claim loop: claims runs up to a concurrency limit, heartbeats their leases, aborts
// them on cancel or lease loss, finalizes them, and drains on shutdown.
//
// Wake-ups, not busy polling: the store's `run.queued` and `run.terminal` notifications
// (a finished run frees its lane and a slot) start a claim round; a slow fallback poll
// exists only for leases that expire with no notification (a dead worker's runs).

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { isKeelError } from '../errors.ts';
import type { ApprovalStore, ClaimedRun, Fence, RunStore, StoreChanges } from '../store/store.ts';
import { sweepApprovalTimeouts } from './approvals.ts';
import type { RunStatus } from '../types.ts';
import type { RunEvent } from '../events.ts';
import { finalizeRun, runFailed } from './finalize.ts';
import type { RunJournalPort } from './journal.ts';
import type { RunLoopDeps } from './run-loop.ts';
import { runLoop } from './run-loop.ts';
import { RunControl } from './run-control.ts';
import { OutputSchemas } from './output-schema.ts';
import { TokenCounter } from './token-count.ts';

export interface WorkerOptions extends Omit<RunLoopDeps, 'journal'> {
  store: RunLoopDeps['store'] &
    RunJournalPort &
    Pick<RunStore, 'claimNextRun' | 'heartbeat'> &
    StoreChanges &
    Pick<ApprovalStore, 'expireApprovals'>;
  /** The runs' journal (journal.ts); default: the store itself. */
  journal?: RunJournalPort;
  concurrency: number;
  leaseMs: number;
  /** At most this many running runs per tenant, across processes (null: no cap). */
  maxRunningPerTenant?: number | null;
  /** false: the cap binds only while the store holds more than one tenant (the default cap). */
  runningCapWhenAlone?: boolean;
  /** Lease owner name shown in `run.claimed` events; unique per worker by default. */
  owner?: string;
  /** Fallback claim round for expired leases; not the normal wake-up path. */
  pollMs?: number;
}

interface StopOptions {
  /** How long in-flight tool calls may run on before they are aborted. */
  graceMs?: number;
}

export interface Worker {
  readonly owner: string;
  /** Runs this worker holds right now. */
  readonly activeRuns: number;
  start(): void;
  /** Starts a claim round now (also done on every store notification). */
  wake(): void;
  /** Stops claiming, interrupts runs at their next checkpoint, releases their leases. */
  stop(options?: StopOptions): Promise<void>;
}

interface HeldRun {
  fence: Fence;
  control: RunControl;
  /**
   * The attempt's loop is over and its finalize is on the way: the `run.terminal` it
   * commits needs no stop (aborting the signals of a finished attempt cost 1.7 % of a
   * turn's CPU, every listener a call left on them dispatched).
   */
  finalizing: boolean;
}

const DEFAULT_GRACE_MS = 10_000;

export function createWorker(options: WorkerOptions): Worker {
  const { store, logger, metrics } = options;
  const journal = options.journal ?? store;
  const now = options.now ?? Date.now;
  const owner = options.owner ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  // One compile per distinct output_schema for all of this worker's runs.
  const loopDeps: RunLoopDeps = {
    ...options,
    journal,
    outputSchemas: options.outputSchemas ?? new OutputSchemas(),
    tokenCounter: options.tokenCounter ?? new TokenCounter(),
  };
  const held = new Map<string, HeldRun>();
  const running = new Set<Promise<void>>();
  let started = false;
  let stopping = false;
  let pumping: Promise<void> | null = null;
  let pumpAgain = false;
  let wakeScheduled = false;
  let pollTimer: NodeJS.Timeout | null = null;
  let unsubscribe: (() => void) | null = null;

  function wake(): void {
    // Coalesces bursts of notifications, and never claims re-entrantly from inside a
    // store listener.
    if (wakeScheduled || stopping || !started) return;
    wakeScheduled = true;
    setImmediate(() => {
      wakeScheduled = false;
      void pump();
    });
  }

  function pump(): Promise<void> {
    if (pumping) {
      pumpAgain = true;
      return pumping;
    }
    // `.finally` runs after this assignment even when the rounds end without awaiting
    // anything (a wake while every slot is busy); clearing `pumping` inside the rounds
    // would run before the assignment and leave a settled promise that blocks every
    // later claim.
    pumping = claimRounds().finally(() => {
      pumping = null;
    });
    return pumping;
  }

  async function claimRounds(): Promise<void> {
    try {
      do {
        pumpAgain = false;
        while (!stopping && held.size < options.concurrency) {
          const claimed = await store.claimNextRun({
            owner,
            lease_ms: options.leaseMs,
            max_running_per_tenant: options.maxRunningPerTenant ?? null,
            running_cap_when_alone: options.runningCapWhenAlone ?? true,
          });
          if (!claimed) break;
          launch(claimed);
        }
      } while (pumpAgain && !stopping);
    } catch (error) {
      // A busy or unreachable store: the next notification or poll tries again.
      logger.warn({ err: error }, 'claiming runs failed');
    }
  }

  function launch(claimed: ClaimedRun): void {
    const fence: Fence = { run_id: claimed.run.run_id, attempt: claimed.run.attempt };
    const control = new RunControl();
    const run: HeldRun = { fence, control, finalizing: false };
    held.set(fence.run_id, run);
    if (stopping) control.interrupt();
    const task = execute(claimed, run).finally(() => {
      held.delete(fence.run_id);
      running.delete(task);
      wake();
    });
    running.add(task);
  }

  /**
   * Extends the lease every lease_ms/3 and records the run time so far with it: an
   * attempt killed between checkpoints still has its time counted toward timeout_ms.
   */
  function startHeartbeat(fence: Fence, control: RunControl, elapsedMs: () => number): () => void {
    let timer: NodeJS.Timeout | null = null;
    let ended = false;
    const interval = Math.max(1, Math.floor(options.leaseMs / 3));
    let beatStarted = Date.now();
    const beat = async (): Promise<void> => {
      beatStarted = Date.now();
      try {
        if (!(await store.heartbeat(fence, options.leaseMs, elapsedMs()))) {
          logger.info({ run_id: fence.run_id, attempt: fence.attempt }, 'lease lost; stopping run');
          control.stop('lease_lost');
          return;
        }
      } catch (error) {
        logger.warn({ err: error, run_id: fence.run_id }, 'heartbeat failed; retrying');
      }
      schedule();
    };
    // The next beat is due an interval after this one started, not after it answered: a
    // slow store round trip (a busy pool, a loaded machine) must not stretch the gap
    // between renewals toward the lease's end.
    const schedule = (): void => {
      if (!ended)
        timer = setTimeout(() => void beat(), Math.max(1, interval - (Date.now() - beatStarted)));
    };
    schedule();
    return () => {
      ended = true;
      if (timer) clearTimeout(timer);
    };
  }

  async function execute(claimed: ClaimedRun, run: HeldRun): Promise<void> {
    const { fence, control } = run;
    const startedAt = now();
    const log = logger.child({ run_id: fence.run_id, attempt: fence.attempt });
    if (fence.attempt > 1) metrics.leaseReclaims.inc();
    const elapsedMs = (): number => claimed.elapsed_ms + (now() - startedAt);
    const stopHeartbeat = startHeartbeat(fence, control, elapsedMs);
    let finished: RunStatus | null = null;
    try {
      if (stopping) {
        await releaseLease(fence);
        return;
      }
      if (!claimed.agent) {
        const message = `agent "${claimed.run.agent}" was deleted`;
        const { steps, usage } = claimed.run;
        const figures = { steps, usage, elapsed_ms: claimed.elapsed_ms };
        const input = { ...runFailed('AGENT_NOT_FOUND', message), ...figures };
        run.finalizing = true;
        finished = (await finalizeRun(journal, log, fence, input))?.status ?? null;
        return;
      }
      const { outcome, figures } = await runLoop(loopDeps, claimed, claimed.agent, control);
      if (outcome.status === 'stopped') {
        log.info({ cause: outcome.cause }, 'run attempt stopped');
        stopHeartbeat();
        if (outcome.cause === 'shutdown') await releaseLease(fence);
        if (outcome.cause === 'cancelled') finished = 'cancelled';
        return;
      }
      // Object.assign, not `{ ...outcome, ...figures }`: V8 builds that on a slow path.
      const input = Object.assign({}, outcome, figures);
      run.finalizing = true;
      finished = (await finalizeRun(journal, log, fence, input))?.status ?? null;
    } catch (error) {
      // Unexpected (store unreachable, a bug): the attempt crashed. The run stays as its
      // last checkpoint left it and the lease goes at once (or expires, if the store is
      // unreachable), so it is claimed again soon; each such attempt counts toward
      // workers.max_attempts, after which the run fails RUN_CRASHED (run-loop.ts).
      stopHeartbeat();
      if (isKeelError(error, 'STORE_UNAVAILABLE')) {
        // The store blinked (connection lost, disk full): not this attempt's fault, so it
        // must not spend the run's crash budget. Record the release once the store is
        // back, while the lease still holds; past it, the attempt counts as crashed.
        log.warn({ err: error }, 'run attempt stopped: the store is unavailable');
        await releaseWhenStoreReturns(fence, now() + options.leaseMs);
        return;
      }
      log.error({ err: error }, 'run attempt crashed; it resumes from its last checkpoint');
      await endLease(fence);
    } finally {
      stopHeartbeat();
      if (finished) {
        metrics.runsFinished.inc({ status: finished });
        metrics.runDuration.observe({ status: finished }, (now() - startedAt) / 1000);
      }
    }
  }

  /**
   * A graceful stop hands the run back: `run.released` says this attempt did not crash
   * (it does not count toward max_attempts), then the lease ends.
   */
  async function releaseLease(fence: Fence): Promise<void> {
    try {
      await recordRelease(fence);
    } catch (error) {
      logger.warn({ err: error, run_id: fence.run_id }, 'recording the release failed');
    }
    await endLease(fence);
  }

  /** `run.released`: this attempt ends without crashing (fenced; throws when it cannot). */
  async function recordRelease(fence: Fence): Promise<void> {
    const released: RunEvent = { type: 'run.released', data: { attempt: fence.attempt } };
    await journal.appendProgress(fence, { events: [released] });
  }

  /**
   * Retries `releaseLease` until it is recorded, the fence is gone or `deadline` (the
   * lease's end) passes, backing off from 50 ms to 1 s between tries.
   */
  async function releaseWhenStoreReturns(fence: Fence, deadline: number): Promise<void> {
    for (let wait = 50; now() < deadline; wait = Math.min(wait * 2, 1000)) {
      try {
        await recordRelease(fence);
        await endLease(fence);
        return;
      } catch (error) {
        if (!isKeelError(error, 'STORE_UNAVAILABLE')) return; // LEASE_LOST: someone else has it
      }
      await delay(Math.min(wait, Math.max(0, deadline - now())));
    }
  }

  /** A zero-length lease ends now: the run is claimable at once (see Store.heartbeat). */
  async function endLease(fence: Fence): Promise<void> {
    try {
      await store.heartbeat(fence, 0);
    } catch (error) {
      logger.warn({ err: error, run_id: fence.run_id }, 'releasing the lease failed');
    }
  }

  return {
    owner,
    get activeRuns() {
      return held.size;
    },
    start() {
      if (started) return;
      started = true;
      unsubscribe = store.subscribe((change) => {
        // store.resync: queued notifications may have been missed while the store was away.
        if (change.kind === 'run.queued' || change.kind === 'store.resync') wake();
        if (change.kind === 'run.terminal') {
          // Cancel or agent deletion: abort at once so nothing more is written. Our own
          // finalize lands here too, after the loop has ended: nothing to stop.
          const run = held.get(change.run_id);
          if (run && !run.finalizing)
            run.control.stop(change.status === 'cancelled' ? 'cancelled' : 'lease_lost');
          wake();
        }
      });
      pollTimer = setInterval(() => {
        wake();
        // Approval timeouts have no notification: the poll settles the due ones, and a
        // settled approval announces its run as queued (approvals.ts).
        void sweepApprovalTimeouts(store, (error) =>
          logger.warn({ err: error }, 'the approval timeout sweep failed'),
        );
      }, options.pollMs ?? 1000);
      pollTimer.unref();
      wake();
    },
    wake,
    async stop(stopOptions = {}) {
      if (stopping) return;
      stopping = true;
      unsubscribe?.();
      if (pollTimer) clearInterval(pollTimer);
      await pumping;
      for (const run of held.values()) run.control.interrupt();
      const graceMs = stopOptions.graceMs ?? DEFAULT_GRACE_MS;
      const graceEnded = new AbortController();
      const graceOver = delay(graceMs, undefined, { signal: graceEnded.signal }).catch(() => {});
      await Promise.race([Promise.all(running), graceOver]);
      graceEnded.abort();
      for (const run of held.values()) run.control.stop('shutdown');
      await Promise.all(running);
    },
  };
}
