// A client that leaves while the server still works on its request: the tests of routes
// that must notice a disconnect that happened before they attached their own listener.

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { waitFor } from './wait-for.ts';

/**
 * Sends a request with `send`, waits until the server is held at `reached`, aborts it,
 * and returns once the server's side of the request (the one whose URL contains
 * `urlPart`) has seen the client leave.
 */
export async function clientGoneAt(
  server: Server,
  urlPart: string,
  reached: Promise<void>,
  send: (signal: AbortSignal) => Promise<unknown>,
): Promise<void> {
  let response: ServerResponse | null = null;
  const capture = (request: IncomingMessage, raw: ServerResponse): void => {
    if (request.url?.includes(urlPart)) response = raw;
  };
  server.on('request', capture);
  try {
    const controller = new AbortController();
    const sending = send(controller.signal).catch(() => undefined);
    await reached;
    controller.abort();
    await sending;
    await waitFor('the server saw the client leave', () => response?.destroyed);
  } finally {
    server.off('request', capture);
  }
}
