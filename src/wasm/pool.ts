// The pool of sandbox worker threads (docs/wasm-tools.md). Long-lived workers, one call
// at a time each, calls queued for a free one; the compiled module is posted with each
// call (V8 shares its code between threads). The wall-clock limit is the host's timer:
// when it fires, or the run's abort signal does, the call is settled at once and its
// worker is terminated (not awaited: a guest cannot catch terminate()) and replaced.
// Whatever a guest does becomes a SandboxResult; nothing here throws because of a guest.
// A worker that dies (its heap limit, a crash) settles its call as WASM_CRASHED and is
// replaced. Tenants share the pool: a tenant holds at most `maxPerTenant` workers at
// once, so another tenant's call finds one while the first floods the queue.

import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { JsonValue } from '../types.ts';

const SANDBOX_THREAD = new URL('./sandbox-thread.js', import.meta.url);
/**
 * A worker's own limits: heap for the shim's buffers and a module's tables (a guest's
 * wasm memory is capped by the module, its tables by module-limits.ts), code space for
 * the shim, and the stack a guest's recursion overflows (a trap, not a crash). Past
 * these the worker dies with ERR_WORKER_OUT_OF_MEMORY and is replaced.
 */
const WORKER_LIMITS = {
  maxOldGenerationSizeMb: 64,
  maxYoungGenerationSizeMb: 16,
  codeRangeSizeMb: 16,
  stackSizeMb: 4,
};
const STDERR_IN_MESSAGE = 200;

export type SandboxErrorCode =
  | 'WASM_TRAP'
  | 'WASM_EXIT_NONZERO'
  | 'WASM_BAD_OUTPUT'
  | 'WASM_OUTPUT_TOO_LARGE'
  | 'WASM_MEMORY_LIMIT'
  | 'WASM_TIMEOUT'
  | 'WASM_CRASHED';

export type SandboxResult =
  | { ok: true; value: JsonValue }
  | { ok: false; code: SandboxErrorCode; message: string }
  | { ok: false; code: 'ABORTED'; message: string };

export interface SandboxJob {
  /** Whose call it is: the pool's share is per tenant. */
  tenant: string;
  module: WebAssembly.Module;
  /** What the guest reads on stdin. */
  input: Uint8Array;
  maxOutputBytes: number;
  memoryLimitBytes: number;
  /** The guest's wall-clock budget, counted from when a worker takes the call. */
  timeoutMs: number;
  /** Epoch ms (the run's): past it the call is WASM_TIMEOUT, queued or running. */
  deadline: number;
  signal: AbortSignal;
}

/** What sandbox-thread.js posts back for one call. */
interface ThreadOutcome {
  id: number;
  exitCode: number | null;
  trap: string | null;
  deadline: boolean;
  overflow: boolean;
  stderr: string;
  memoryBytes: number;
  output: JsonValue | undefined;
  badOutput: string | null;
}

export interface WasmPoolStats {
  workers: number;
  busy: number;
  queued: number;
  /** Workers terminated and replaced (timeouts, aborts, crashes) since the start. */
  replaced: number;
}

export interface WasmPool {
  run(job: SandboxJob): Promise<SandboxResult>;
  stats(): WasmPoolStats;
  /** Terminates every worker; queued and running calls end as WASM_CRASHED. */
  close(): Promise<void>;
}

/**
 * A trap or a failing exit counts as the memory limit when the guest's memory ended
 * within this much of the cap: a failed memory.grow shows up only as the guest giving up.
 */
function nearCap(memoryBytes: number, limit: number): boolean {
  return memoryBytes + Math.max(65_536, Math.min(4_194_304, limit / 4)) >= limit;
}

export function classify(outcome: ThreadOutcome, memoryLimitBytes: number): SandboxResult {
  if (outcome.deadline) return TIMED_OUT;
  if (outcome.overflow) {
    return {
      ok: false,
      code: 'WASM_OUTPUT_TOO_LARGE',
      message: 'stdout exceeded max_output_bytes',
    };
  }
  const failed = outcome.trap !== null || outcome.exitCode !== 0;
  if (failed && nearCap(outcome.memoryBytes, memoryLimitBytes)) {
    return {
      ok: false,
      code: 'WASM_MEMORY_LIMIT',
      message: `the module stopped at ${Math.round(outcome.memoryBytes / 1_048_576)} MiB of memory, at its limit (${outcome.trap ?? `exit ${outcome.exitCode}`})`,
    };
  }
  if (outcome.trap !== null) return { ok: false, code: 'WASM_TRAP', message: outcome.trap };
  if (outcome.exitCode !== 0) {
    const stderr = outcome.stderr.slice(0, STDERR_IN_MESSAGE).trim();
    return {
      ok: false,
      code: 'WASM_EXIT_NONZERO',
      message: `exit code ${outcome.exitCode}${stderr ? `: ${stderr}` : ''}`,
    };
  }
  if (outcome.badOutput !== null || outcome.output === undefined) {
    return {
      ok: false,
      code: 'WASM_BAD_OUTPUT',
      message: `stdout is not JSON: ${outcome.badOutput ?? 'empty'}`,
    };
  }
  return { ok: true, value: outcome.output };
}

interface Pending {
  id: number;
  job: SandboxJob;
  /** Settles the call now; a running call's worker is replaced. */
  stop(result: SandboxResult): void;
  settle(result: SandboxResult): void;
  /** Set when a worker takes the call: the guest's budget. */
  guestTimer?: NodeJS.Timeout;
}

interface Slot {
  worker: Worker;
  /** Said it is ready: a call posted now starts at once (a new worker takes ~20 ms to start). */
  ready: boolean;
  call: Pending | null;
}

const ABORTED: SandboxResult = { ok: false, code: 'ABORTED', message: 'the call was aborted' };
const TIMED_OUT: SandboxResult = {
  ok: false,
  code: 'WASM_TIMEOUT',
  message: 'the deadline passed',
};

/** One worker per core, at least 1 and at most 4: a call keeps its worker's core busy. */
export function defaultPoolSize(): number {
  return Math.max(1, Math.min(4, availableParallelism()));
}

/** Half the pool, rounded up: two tenants always get a worker each (with two or more). */
export function defaultMaxWorkersPerTenant(poolSize: number): number {
  return Math.ceil(poolSize / 2);
}

export function createWasmPool(options: { size: number; maxPerTenant?: number }): WasmPool {
  const maxPerTenant = options.maxPerTenant ?? defaultMaxWorkersPerTenant(options.size);
  const slots: Slot[] = [];
  const queue: Pending[] = [];
  let nextId = 1;
  let replaced = 0;
  let closed = false;

  function spawn(slot: Slot): Worker {
    const worker = new Worker(SANDBOX_THREAD, {
      env: {},
      // Not the parent's flags: a `--import tsx` would load the TS loader in every worker.
      execArgv: [],
      stdout: true,
      stderr: true,
      resourceLimits: WORKER_LIMITS,
    });
    slot.ready = false;
    worker.stdout.resume();
    worker.stderr.resume();
    worker.on('message', (outcome: ThreadOutcome | { ready: true }) => {
      if (slot.worker !== worker) return;
      if ('ready' in outcome) {
        slot.ready = true;
        pump();
        return;
      }
      const call = slot.call;
      if (!call || call.id !== outcome.id || slot.worker !== worker) return;
      slot.call = null;
      call.settle(classify(outcome, call.job.memoryLimitBytes));
      pump();
    });
    const died = (why: string) => {
      if (slot.worker !== worker) return;
      const call = slot.call;
      replace(slot);
      call?.settle({ ok: false, code: 'WASM_CRASHED', message: `the sandbox worker ${why}` });
    };
    worker.on('error', (error) => died(`failed: ${error.message}`));
    worker.on('exit', (code) => died(`exited with code ${code}`));
    return worker;
  }

  function replace(slot: Slot): void {
    const old = slot.worker;
    slot.call = null;
    replaced += 1;
    if (!closed) slot.worker = spawn(slot);
    old.removeAllListeners('message');
    void old.terminate();
    if (!closed) pump();
  }

  /** Workers each tenant holds now. */
  function held(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const slot of slots) {
      if (slot.call) counts.set(slot.call.job.tenant, (counts.get(slot.call.job.tenant) ?? 0) + 1);
    }
    return counts;
  }

  /** Takes the oldest queued call whose tenant is under its share; aborted ones settle. */
  function next(counts: Map<string, number>): Pending | undefined {
    for (let i = 0; i < queue.length;) {
      const call = queue[i] as Pending;
      if (call.job.signal.aborted) {
        queue.splice(i, 1);
        call.settle(ABORTED);
        continue;
      }
      if ((counts.get(call.job.tenant) ?? 0) < maxPerTenant) {
        queue.splice(i, 1);
        return call;
      }
      i += 1;
    }
    return undefined;
  }

  function pump(): void {
    const counts = held();
    for (const slot of slots) {
      if (slot.call || !slot.ready) continue;
      const call = next(counts);
      if (!call) return;
      counts.set(call.job.tenant, (counts.get(call.job.tenant) ?? 0) + 1);
      slot.call = call;
      const { job } = call;
      const budget = Math.max(0, Math.min(job.timeoutMs, job.deadline - Date.now()));
      const current = call;
      call.guestTimer = setTimeout(() => current.stop(TIMED_OUT), budget);
      slot.worker.postMessage({
        id: call.id,
        module: job.module,
        input: job.input,
        maxOutput: job.maxOutputBytes,
        timeoutMs: budget,
      });
    }
  }

  for (let i = 0; i < options.size; i++) {
    const slot = { call: null, ready: false } as unknown as Slot;
    slot.worker = spawn(slot);
    slots.push(slot);
  }

  return {
    run(job) {
      if (closed) {
        return Promise.resolve({ ok: false, code: 'WASM_CRASHED', message: 'the pool is closed' });
      }
      if (job.signal.aborted) return Promise.resolve(ABORTED);
      return new Promise<SandboxResult>((resolve) => {
        const onAbort = () => call.stop(ABORTED);
        const call: Pending = {
          id: nextId++,
          job,
          stop(result) {
            const slot = slots.find((candidate) => candidate.call === call);
            const queued = queue.indexOf(call);
            if (queued >= 0) queue.splice(queued, 1);
            call.settle(result);
            if (slot) replace(slot);
          },
          settle(result) {
            clearTimeout(timer);
            clearTimeout(call.guestTimer);
            job.signal.removeEventListener('abort', onAbort);
            resolve(result);
          },
        };
        const timer = setTimeout(
          () => call.stop(TIMED_OUT),
          Math.max(0, job.deadline - Date.now()),
        );
        job.signal.addEventListener('abort', onAbort, { once: true });
        queue.push(call);
        pump();
      });
    },
    stats() {
      return {
        workers: slots.length,
        busy: slots.filter((slot) => slot.call).length,
        queued: queue.length,
        replaced,
      };
    },
    async close() {
      closed = true;
      const pending = [...queue, ...slots.flatMap((slot) => (slot.call ? [slot.call] : []))];
      queue.length = 0;
      const workers = slots.map((slot) => slot.worker);
      for (const slot of slots) slot.call = null;
      for (const call of pending) {
        call.settle({ ok: false, code: 'WASM_CRASHED', message: 'keel is stopping' });
      }
      for (const worker of workers) worker.removeAllListeners();
      await Promise.all(workers.map((worker) => worker.terminate()));
    },
  };
}
