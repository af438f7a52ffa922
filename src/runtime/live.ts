// Live-only run events (`model.delta`): never stored, fanned out in process to whoever
// listens (the SSE route). Persisted events reach listeners through store.subscribe.
//
// With a relay (PostgreSQL: LISTEN/NOTIFY, src/store/postgres/live-channel.ts) they also
// cross processes, so an API-role process's SSE clients see the deltas a worker-role
// process produces. Lossy by design: a message that does not fit, or finds the relay's
// bounded queue full, is dropped and counted; the persisted `model.response` and the
// run's output stay exact.

import type { LiveEvent } from '../events.ts';

type LiveListener = (event: LiveEvent) => void;

export interface LiveEvents {
  publish(runId: string, event: LiveEvent): void;
  /** Returns an unsubscribe function. */
  subscribe(runId: string, listener: LiveListener): () => void;
  /**
   * Whether a run's deltas may reach anyone: a listener in this process, one announced by
   * `expect` and not yet arrived, or — with a relay — possibly one in another process (not
   * knowable here, so always true).
   */
  watched(runId: string): boolean;
  /**
   * A client will follow the run (it said so as it submitted the turn): the run counts as
   * watched from now, until its first listener subscribes or `ms` pass.
   */
  expect(runId: string, ms: number): void;
  /** How many announced listeners are held (expired ones until the next sweep). */
  expecting(): number;
}

/** Carries opaque messages to the other processes of one store, best effort. */
export interface LiveRelay {
  /** Best effort: may drop the message (too big, queue full, send failed). Never throws. */
  send(message: string): void;
  /** Messages from other processes (never this one's own). Returns an unsubscribe. */
  onMessage(listener: (message: string) => void): () => void;
  /** Reports dropped messages (how many at a time). */
  onDropped(listener: (count: number) => void): void;
}

/**
 * The longest text one relayed message carries, in UTF-16 units: a longer delta is
 * split, so a message (JSON-escaped, with run id and step) stays under NOTIFY's
 * 8000-byte payload limit even when every character needs 6 bytes of escape.
 */
export const MAX_RELAYED_TEXT = 1000;

export interface LiveEventsOptions {
  relay?: LiveRelay;
  /** Called with the number of relayed messages dropped (metrics). */
  onDropped?: (count: number) => void;
  /** Milliseconds for `expect`'s waits (tests); default performance.now. */
  now?: () => number;
  /** How many announced listeners are kept before expired ones are first swept (tests). */
  expectedSweepAt?: number;
}

/**
 * `n` numbers the messages of one process: NOTIFY delivers identical payloads sent in
 * one transaction once, and two one-letter chunks of a run are often identical.
 */
function encode(runId: string, event: LiveEvent, n: number): string {
  return JSON.stringify([runId, event.data.step, event.data.text, n]);
}

function decode(message: string): { runId: string; event: LiveEvent } | null {
  try {
    const [runId, step, text] = JSON.parse(message) as unknown[];
    if (typeof runId !== 'string' || typeof step !== 'number' || typeof text !== 'string') {
      return null;
    }
    return { runId, event: { type: 'model.delta', data: { step, text } } };
  } catch {
    return null;
  }
}

/** Splits text into pieces of at most `max` units without cutting a surrogate pair. */
export function splitText(text: string, max: number): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + max, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}

/** Expected listeners kept before expired ones are first swept out. */
const EXPECTED_SWEEP_AT = 1024;

export function createLiveEvents(options: LiveEventsOptions = {}): LiveEvents {
  const listeners = new Map<string, Set<LiveListener>>();
  const now = options.now ?? (() => performance.now());
  const firstSweepAt = options.expectedSweepAt ?? EXPECTED_SWEEP_AT;
  // runId → until when (now()) an announced listener is waited for.
  const expected = new Map<string, number>();
  // Sweeps when the map doubled since the last one: amortised O(1) per expect, however
  // many announced listeners are alive at once.
  let sweepAt = firstSweepAt;
  const deliver = (runId: string, event: LiveEvent): void => {
    for (const listener of listeners.get(runId) ?? []) {
      try {
        listener(event);
      } catch {
        // A broken listener (a closed SSE socket) must not break the run.
      }
    }
  };
  const { relay } = options;
  let sent = 0;
  if (relay && options.onDropped) relay.onDropped(options.onDropped);
  relay?.onMessage((message) => {
    const decoded = decode(message);
    if (decoded) deliver(decoded.runId, decoded.event);
  });
  return {
    publish(runId, event) {
      deliver(runId, event);
      if (!relay) return;
      for (const text of splitText(event.data.text, MAX_RELAYED_TEXT)) {
        const piece: LiveEvent = { type: 'model.delta', data: { step: event.data.step, text } };
        sent += 1;
        relay.send(encode(runId, piece, sent));
      }
    },
    watched(runId) {
      if (relay !== undefined || listeners.has(runId)) return true;
      const until = expected.get(runId);
      if (until === undefined) return false;
      if (until > now()) return true;
      expected.delete(runId);
      return false;
    },
    expect(runId, ms) {
      // With a relay every run counts as watched: nothing to remember.
      if (relay) return;
      const at = now();
      if (expected.size >= sweepAt) {
        for (const [id, until] of expected) if (until <= at) expected.delete(id);
        sweepAt = Math.max(firstSweepAt, expected.size * 2);
      }
      expected.set(runId, at + ms);
    },
    expecting: () => expected.size,
    subscribe(runId, listener) {
      expected.delete(runId);
      let set = listeners.get(runId);
      if (!set) {
        set = new Set();
        listeners.set(runId, set);
      }
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(runId);
      };
    },
  };
}
