// Waiting on a condition instead of sleeping for a guessed time: the check is polled
// until it holds (or returns a value), and a clear error names what never happened.

import { setTimeout as delay } from 'node:timers/promises';

export interface WaitOptions {
  timeoutMs?: number;
  /** Poll interval; small, because the check is what decides, not the clock. */
  everyMs?: number;
}

/** Resolves with the check's first truthy result; throws after `timeoutMs` (default 10 s). */
export async function waitFor<T>(
  what: string,
  check: () => T | Promise<T>,
  { timeoutMs = 10_000, everyMs = 5 }: WaitOptions = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await check();
    if (result) return result as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms: ${what} never happened`);
    await delay(everyMs);
  }
}

/**
 * The promise's value, or null when it has not settled within `ms`. The timer is cleared
 * either way: a pending timer keeps the test file's process alive after its last test
 * (the runner waits for the process to exit), which held a file open up to 90 s.
 */
export async function settledWithin<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)));
  try {
    return await Promise.race([promise, gaveUp]);
  } finally {
    clearTimeout(timer);
  }
}
