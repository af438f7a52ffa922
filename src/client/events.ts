// A run's events as an async iterator: GET …/runs/:id/events (server-sent events), and
// when the connection drops before the terminal event, a new request with Last-Event-ID
// set to the last seq seen, so nothing is lost or repeated (docs/http-api.md, Events).

import type { StreamEvent } from '../events.ts';
import { endsStream } from '../events.ts';
import { readSse } from './sse.ts';

/**
 * A run event, discriminated by `type` (the server's own union, src/events.ts):
 * persisted ones carry seq and ts; live ones (`model.delta`) do not.
 */
export type RunEvent = StreamEvent;

export interface EventStreamOptions {
  /** Resume after this seq (the Last-Event-ID of the first request). */
  lastEventId?: number;
  signal?: AbortSignal;
  /** Reconnects in a row without a new event before giving up; default 5. */
  maxReconnects?: number;
}

export interface EventSource {
  /** One request for the stream; a non-2xx answer must throw. */
  open(lastEventId: number | undefined, signal: AbortSignal | undefined): Promise<Response>;
  /** Whether the run has ended (asked when a stream closes without a terminal event). */
  ended(): Promise<boolean>;
}

export async function* runEvents(
  source: EventSource,
  options: EventStreamOptions = {},
): AsyncGenerator<RunEvent> {
  let last = options.lastEventId;
  let reconnects = 0;
  const maxReconnects = options.maxReconnects ?? 5;
  for (;;) {
    const response = await source.open(last, options.signal);
    let received = 0;
    try {
      if (response.body) {
        for await (const message of readSse(response.body)) {
          const event = JSON.parse(message.data) as RunEvent;
          if (message.id !== null) last = Number(message.id);
          received += 1;
          reconnects = 0;
          yield event;
          if (endsStream(event)) return;
        }
      }
    } catch (error) {
      // A dropped connection resumes below; an abort by the caller ends the iteration.
      if (options.signal?.aborted) throw error;
    }
    if (options.signal?.aborted) return;
    // Nothing new on this connection: resumed past the end, or the run already ended.
    if (received === 0 && (await source.ended())) return;
    reconnects += 1;
    if (reconnects > maxReconnects) {
      throw new Error(`the event stream closed ${reconnects} times without a new event`);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 100 * 2 ** reconnects)));
  }
}
