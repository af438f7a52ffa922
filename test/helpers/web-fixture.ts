// A raw HTTP/1.1 server on 127.0.0.1 for the web_fetch tests. Raw (node:net) because the
// interesting servers break the protocol on purpose: a Content-Length that lies, headers
// and then silence, a body trickled byte by byte — node:http would refuse to send some
// of that. Responses never close the connection themselves, so every socket the test
// sees closed was closed by the client: that is what the leak checks count.

import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { Readable } from 'node:stream';

export interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
}

export type RawHandler = (socket: Socket, request: RawRequest) => void;

export interface RawServer {
  port: number;
  url(path: string): string;
  /** Connections ever accepted. */
  connections(): number;
  /** Polls until every accepted socket is closed or `withinMs` passes; returns how many stay open. */
  openSocketsAfter(withinMs?: number): Promise<number>;
  close(): Promise<void>;
}

function parseHead(head: string): RawRequest {
  const [requestLine = '', ...headerLines] = head.split('\r\n');
  const [method = '', path = '/'] = requestLine.split(' ');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon > 0)
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { method, path, headers };
}

export async function startRawServer(routes: Record<string, RawHandler>): Promise<RawServer> {
  const open = new Set<Socket>();
  let accepted = 0;
  const server: Server = createServer((socket) => {
    accepted += 1;
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    // A client that resets the connection must not crash the test process.
    socket.on('error', () => undefined);
    let buffered = '';
    const onData = (chunk: Buffer): void => {
      buffered += chunk.toString('latin1');
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      const request = parseHead(buffered.slice(0, end));
      const route = routes[request.path.split('?')[0] ?? '/'];
      if (route) route(socket, request);
      else writeResponse(socket, 404, { 'content-type': 'text/plain' }, 'no such route');
    };
    socket.on('data', onData);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    connections: () => accepted,
    async openSocketsAfter(withinMs = 2000) {
      const until = Date.now() + withinMs;
      while (open.size > 0 && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return open.size;
    },
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const REASONS: Record<number, string> = { 200: 'OK', 302: 'Found', 404: 'Not Found' };

/** The status line and headers only; the caller decides what the body is (or is not). */
export function writeHead(socket: Socket, status: number, headers: Record<string, string>): void {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.write(`HTTP/1.1 ${status} ${REASONS[status] ?? 'Status'}\r\n${lines.join('')}\r\n`);
}

/** A complete response with an honest Content-Length; the connection stays open. */
export function writeResponse(
  socket: Socket,
  status: number,
  headers: Record<string, string>,
  body: string | Buffer,
): void {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  writeHead(socket, status, { ...headers, 'content-length': String(bytes.length) });
  socket.write(bytes);
}

/** One HTTP chunk from `next` every `everyMs` until it returns null (end) or the client goes. */
export function trickleChunks(socket: Socket, everyMs: number, next: () => Buffer | null): void {
  const timer = setInterval(() => {
    if (socket.destroyed) return clearInterval(timer);
    const chunk = next();
    if (chunk === null) {
      clearInterval(timer);
      socket.write('0\r\n\r\n');
      return;
    }
    socket.write(`${chunk.length.toString(16)}\r\n`);
    socket.write(chunk);
    socket.write('\r\n');
  }, everyMs);
  socket.on('close', () => clearInterval(timer));
}

/**
 * Sends `source` as a chunked body at the pace the client reads it; an endless source
 * floods until the client closes. Backpressure keeps the server's own memory flat.
 */
export function pipeChunked(socket: Socket, source: Readable): void {
  socket.on('close', () => source.destroy());
  source.on('data', (chunk: Buffer) => {
    if (socket.destroyed || chunk.length === 0) return;
    socket.write(`${chunk.length.toString(16)}\r\n`);
    socket.write(chunk);
    if (!socket.write('\r\n')) {
      source.pause();
      socket.once('drain', () => source.resume());
    }
  });
  source.on('end', () => {
    if (!socket.destroyed) socket.write('0\r\n\r\n');
  });
}

/** An endless stream of `chunk`, read on demand. */
export function endless(chunk: Buffer): Readable {
  return new Readable({
    read() {
      this.push(chunk);
    },
  });
}
