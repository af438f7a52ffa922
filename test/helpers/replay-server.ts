// A tiny loopback HTTP server that answers with queued recorded responses (status,
// headers, body from test/fixtures/providers) and keeps every request it received.

import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:http';

export interface ReplayResponse {
  status?: number;
  headers?: Record<string, string>;
  /** A file under test/fixtures/providers, or literal body text. */
  file?: string;
  body?: string;
}

export interface ReplayServer {
  url: string;
  requests: { path: string; headers: IncomingHttpHeaders; body: string }[];
  respond(...responses: ReplayResponse[]): void;
  close(): Promise<void>;
}

const FIXTURES = new URL('../fixtures/providers/', import.meta.url);

export function fixture(name: string): string {
  return readFileSync(new URL(name, FIXTURES), 'utf8');
}

export async function startReplayServer(): Promise<ReplayServer> {
  const queue: ReplayResponse[] = [];
  const requests: ReplayServer['requests'] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const next = queue.shift() ?? {
        status: 500,
        body: '{"error":{"message":"replay queue empty"}}',
      };
      const body = next.file ? fixture(next.file) : (next.body ?? '');
      const sse = next.file?.endsWith('.sse') ?? false;
      response.writeHead(next.status ?? 200, {
        'content-type': sse ? 'text/event-stream' : 'application/json',
        ...next.headers,
      });
      response.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    respond: (...responses) => void queue.push(...responses),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
