// Why and how a run attempt stops early. Two signals on purpose:
//  * `hard` stops everything (cancel, lease lost, run deadline, end of the shutdown
//    grace): model calls and tool calls alike;
//  * `soft` (shutdown) stops only model calls and step boundaries at once — an
//    unrecorded model response costs nothing to request again after the restart — while
//    a tool call in flight keeps running through the grace period to reach its
//    checkpoint (a half-run effectful call would become OUTCOME_UNKNOWN).

// `waiting`: the attempt handed the run over to a person's decision (approvals.ts).
export type StopCause = 'cancelled' | 'lease_lost' | 'deadline' | 'shutdown' | 'waiting';

/** Thrown inside a run attempt to unwind when it must not write anything more. */
export class RunStopped extends Error {
  constructor(readonly stopCause: StopCause) {
    super(`run stopped: ${stopCause}`);
  }
}

export class RunControl {
  private readonly hard = new AbortController();
  private readonly soft = new AbortController();
  private firstCause: StopCause | null = null;

  /** The first reason recorded wins: a cancel followed by a deadline stays a cancel. */
  get cause(): StopCause | null {
    return this.firstCause;
  }

  get stopped(): boolean {
    return this.firstCause !== null;
  }

  /** For model calls: aborted by any stop, including a shutdown. */
  get modelSignal(): AbortSignal {
    return this.soft.signal;
  }

  /** For tool calls: aborted by every stop except a shutdown still within its grace. */
  get toolSignal(): AbortSignal {
    return this.hard.signal;
  }

  stop(cause: Exclude<StopCause, 'shutdown'> | 'shutdown'): void {
    this.firstCause ??= cause;
    this.soft.abort(cause);
    this.hard.abort(cause);
  }

  /** Shutdown begins: stop at the next boundary and abort model calls, not tool calls. */
  interrupt(): void {
    this.firstCause ??= 'shutdown';
    this.soft.abort('shutdown');
  }
}

/** Sleeps ms, resolving early (false) when the signal aborts; true when it slept fully. */
export function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
