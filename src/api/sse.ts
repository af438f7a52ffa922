// One Server-Sent Events response on a raw Node response: headers, `id`/`event`/`data`
// messages, comment heartbeats, and a single close path that runs cleanup once.

import type { ServerResponse } from 'node:http';
import type { StreamEvent } from '../events.ts';

interface SseMessage {
  /** Only persisted events carry an id (their trace seq): what Last-Event-ID resumes from. */
  id?: number;
  event: string;
  data: unknown;
}

export interface SseStream {
  readonly closed: boolean;
  send(message: SseMessage): void;
  /** Ends the response (after the terminal event) and runs the cleanup. */
  end(): void;
  /** Runs when the stream ends for any reason, client disconnect included. */
  onClose(cleanup: () => void): void;
}

/**
 * A run's event (src/events.ts) as one message: its type names the SSE event; a
 * persisted one carries its trace seq as the id, so Last-Event-ID resumes after it.
 */
export function runEventMessage(event: StreamEvent): SseMessage {
  return event.seq !== undefined
    ? { id: event.seq, event: event.type, data: event }
    : { event: event.type, data: event };
}

export function openSseStream(
  raw: ServerResponse,
  headers: Record<string, string>,
  heartbeatMs: number,
): SseStream {
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    // Proxies must not buffer a live stream.
    'x-accel-buffering': 'no',
    ...headers,
  });
  // Tells the client how long to wait before reconnecting, and flushes the headers.
  raw.write('retry: 2000\n\n');
  const cleanups: (() => void)[] = [];
  let closed = false;
  const heartbeat = setInterval(() => raw.write(': heartbeat\n\n'), heartbeatMs);
  heartbeat.unref();

  function close(): void {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    for (const cleanup of cleanups.splice(0)) cleanup();
  }
  raw.once('close', close);
  // A client that left while the route was still reading (before this stream existed):
  // its 'close' has already fired, and listeners added now would stay until the run ends.
  if (raw.destroyed) close();

  return {
    get closed() {
      return closed;
    },
    send(message) {
      if (closed) return;
      const lines = message.id === undefined ? [] : [`id: ${message.id}`];
      lines.push(`event: ${message.event}`);
      // JSON has no raw newlines, so one data line always suffices.
      lines.push(`data: ${JSON.stringify(message.data)}`);
      raw.write(`${lines.join('\n')}\n\n`);
    },
    end() {
      if (closed) return;
      close();
      raw.end();
    },
    onClose(cleanup) {
      if (closed) cleanup();
      else cleanups.push(cleanup);
    },
  };
}
