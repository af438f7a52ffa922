// How model requests leave keel: node:http / node:https with keep-alive agents, shaped as
// the `fetch` the AI SDK packages take. Measured (`npm run bench -- model-http`), the
// global fetch (undici, web streams end to end) spent about 3× the client CPU of
// node:http per streamed call, wrapped as a Response like this; with two model calls
// per turn that was the largest single cost of a turn over HTTP. The response body is
// also tapped here, as a Node stream, for the trace (recording-fetch.ts), so no web
// TransformStream sits in the way of each chunk.

import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';

/** A fetch for model calls whose response body chunks also reach `tap` as text. */
export type ModelTransport = (
  input: Parameters<typeof globalThis.fetch>[0],
  init: RequestInit | undefined,
  tap: (text: string) => void,
) => Promise<Response>;

/** Statuses whose response has no body (a Response with one cannot be built). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

function urlOf(input: Parameters<typeof globalThis.fetch>[0]): URL {
  if (input instanceof URL) return input;
  return new URL(typeof input === 'string' ? input : input.url);
}

function headerRecord(headers: RequestInit['headers']): Record<string, string> {
  if (!headers) return {};
  if (headers instanceof Headers || Array.isArray(headers)) {
    return Object.fromEntries(headers instanceof Headers ? headers.entries() : headers);
  }
  return headers as Record<string, string>;
}

function bodyOf(body: RequestInit['body']): string | Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  // The AI SDK sends JSON text; anything else is a caller keel does not have.
  throw new TypeError('the model transport sends string or byte bodies only');
}

function responseHeaders(message: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(message.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  return headers;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

export function createNodeHttpTransport(): ModelTransport {
  // One pair of agents per keel (not per provider): idle sockets are reused across
  // providers that share a host, and Node unrefs them, so they never hold the process.
  const httpAgent = new HttpAgent({ keepAlive: true });
  const httpsAgent = new HttpsAgent({ keepAlive: true });
  return (input, init, tap) =>
    new Promise<Response>((resolve, reject) => {
      const url = urlOf(input);
      const signal = init?.signal ?? undefined;
      if (signal?.aborted) {
        reject(abortReason(signal));
        return;
      }
      const https = url.protocol === 'https:';
      if (!https && url.protocol !== 'http:') {
        reject(new TypeError(`unsupported protocol ${url.protocol}`));
        return;
      }
      const body = bodyOf(init?.body);
      const request = (https ? httpsRequest : httpRequest)(url, {
        method: init?.method ?? 'GET',
        headers: headerRecord(init?.headers),
        agent: https ? httpsAgent : httpAgent,
      });
      let response: IncomingMessage | null = null;
      // The body (once there is one) ends with the abort's reason, as fetch's does.
      const onAbort = (): void => {
        const reason = abortReason(signal as AbortSignal) as Error;
        response?.destroy(reason);
        request.destroy(reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      request.on('error', (error: Error) => {
        signal?.removeEventListener('abort', onAbort);
        // What the AI SDK recognises as a connection failure (and retries), as undici
        // reports it; an abort stays an abort.
        reject(signal?.aborted ? error : new TypeError('fetch failed', { cause: error }));
      });
      request.on('response', (message) => {
        response = message;
        message.once('close', () => signal?.removeEventListener('abort', onAbort));
        const status = message.statusCode ?? 0;
        const options = {
          status,
          statusText: message.statusMessage ?? '',
          headers: responseHeaders(message),
        };
        if (NULL_BODY.has(status)) {
          message.resume();
          resolve(new Response(null, options));
          return;
        }
        const decoder = new TextDecoder();
        message.on('data', (chunk: Buffer) => tap(decoder.decode(chunk, { stream: true })));
        resolve(new Response(Readable.toWeb(message) as ReadableStream<Uint8Array>, options));
      });
      request.end(body);
    });
}
