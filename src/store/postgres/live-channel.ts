// Live-only messages between the processes of one schema (channel `keel_live_<schema>`):
// what an API-role process needs to stream `model.delta` from worker processes. Unlike
// change notifications, nothing here is ever re-read: a message is sent at most once,
// after no transaction, and is dropped when it is too big or the bounded queue is full
// (a slow or unreachable database must not grow a worker's memory). Received on the
// store's one LISTEN connection (listener.ts); a process skips its own messages.

import type pg from 'pg';

/** NOTIFY refuses payloads of 8000 bytes or more; keep clear of it. */
export const MAX_LIVE_PAYLOAD_BYTES = 7900;
/** Messages waiting to be sent; more are dropped until the queue drains. */
export const MAX_LIVE_QUEUE = 2000;
const BATCH = 200;

export class PgLiveChannel {
  private readonly listeners = new Set<(message: string) => void>();
  private queue: string[] = [];
  private sending = false;
  private closed = false;
  private droppedListener: (count: number) => void = () => undefined;
  /** Messages dropped so far (too big, queue full, or the send failed). */
  dropped = 0;

  constructor(
    private readonly pool: pg.Pool,
    /** The NOTIFY channel of this schema. */
    readonly channel: string,
    private readonly origin: string,
  ) {}

  /** Dropped messages are counted and reported here (one listener: the metrics). */
  onDropped(listener: (count: number) => void): void {
    this.droppedListener = listener;
  }

  private drop(count: number): void {
    this.dropped += count;
    this.droppedListener(count);
  }

  /** Queues the message for the other processes, or drops it. Never throws. */
  send(message: string): void {
    const payload = `${this.origin}\n${message}`;
    if (
      this.closed ||
      this.queue.length >= MAX_LIVE_QUEUE ||
      Buffer.byteLength(payload) > MAX_LIVE_PAYLOAD_BYTES
    ) {
      this.drop(1);
      return;
    }
    this.queue.push(payload);
    if (!this.sending) {
      this.sending = true;
      void this.flush();
    }
  }

  onMessage(listener: (message: string) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** A notification on `channel` (from listener.ts); this process's own are skipped. */
  receive(payload: string): void {
    const newline = payload.indexOf('\n');
    if (newline < 0 || payload.slice(0, newline) === this.origin) return;
    const message = payload.slice(newline + 1);
    for (const listener of [...this.listeners]) {
      try {
        listener(message);
      } catch {
        // One listener's failure is its own.
      }
    }
  }

  private async flush(): Promise<void> {
    // Batched and one statement in flight at a time: deltas stay in order, and a burst
    // of small chunks costs a few round trips, not one each.
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, BATCH);
      await this.pool
        .query('SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload', [
          this.channel,
          batch,
        ])
        .catch(() => this.drop(batch.length));
    }
    this.sending = false;
  }

  /** Stops sending; waits for the batch in flight. */
  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    this.queue = [];
    while (this.sending) await new Promise((resolve) => setTimeout(resolve, 1));
  }
}
