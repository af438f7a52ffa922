// The transport model requests leave by (src/providers/node-http-transport.ts), against a
// real server on loopback: what fetch promises the AI SDK — status, headers, the body as
// a web stream (also tapped as text for the trace), a body-less status, a refused
// connection reported as undici reports it (so the library retries it), an abort or a
// reader's cancel that ends the request the server sees, a connection cut mid-body that
// errors the body, a slow reader that pauses the socket — and kept-alive connections
// reused across calls.

import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createNodeHttpTransport } from '../src/providers/node-http-transport.ts';
import { waitFor } from './helpers/wait-for.ts';

const seen: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[] =
  [];
const sockets = new Set<unknown>();
let closedEarly = 0;
const LARGE = 32 * 1024 * 1024;
const PATTERN = Buffer.from(Array.from({ length: 65536 }, (_, i) => i % 256));
let largeSent = false;
let largeWritten = 0;

const server = createServer((request: IncomingMessage, response: ServerResponse) => {
  sockets.add(request.socket);
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    seen.push({
      method: request.method ?? '',
      url: request.url ?? '',
      headers: request.headers,
      body,
    });
    if (request.url === '/empty') {
      response.writeHead(204, { 'x-kind': 'empty' });
      response.end();
      return;
    }
    if (request.url === '/reset') {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: first\n\n');
      setTimeout(() => request.socket.destroy(), 5);
      return;
    }
    if (request.url === '/large') {
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      // 32 MiB in 64 KiB writes that wait for drain, each byte its offset mod 256 (order
      // and content checkable); `largeSent` says when the last write left.
      largeWritten = 0;
      const more = (): void => {
        while (largeWritten < LARGE) {
          largeWritten += PATTERN.length;
          if (!response.write(PATTERN)) {
            response.once('drain', more);
            return;
          }
        }
        response.end(() => (largeSent = true));
      };
      more();
      return;
    }
    if (request.url === '/hang') {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: first\n\n');
      response.on('close', () => {
        if (!response.writableEnded) closedEarly += 1;
      });
      return;
    }
    response.writeHead(201, { 'content-type': 'text/event-stream', 'set-cookie': ['a=1', 'b=2'] });
    response.write('data: é');
    setTimeout(() => response.end('\n\ndata: [DONE]\n\n'), 5);
  });
});
let url = '';

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

async function readAll(response: Response): Promise<string> {
  return await response.text();
}

describe('the model transport (node:http as fetch)', () => {
  it('sends method, headers and body; answers status, headers and the streamed body, tapped', async () => {
    const transport = createNodeHttpTransport();
    const tapped: string[] = [];
    const response = await transport(
      `${url}/v1/chat`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-a': '1' },
        body: '{"q":1}',
      },
      (text) => tapped.push(text),
    );
    assert.equal(response.status, 201);
    assert.equal(response.headers.get('content-type'), 'text/event-stream');
    assert.equal(response.headers.get('set-cookie'), 'a=1, b=2');
    assert.equal(await readAll(response), 'data: é\n\ndata: [DONE]\n\n');
    assert.equal(tapped.join(''), 'data: é\n\ndata: [DONE]\n\n');
    const request = seen.at(-1);
    assert.equal(request?.method, 'POST');
    assert.equal(request?.body, '{"q":1}');
    assert.equal(request?.headers['x-a'], '1');

    // A second call reuses the kept-alive connection.
    const before = sockets.size;
    await readAll(
      await transport(new URL(`${url}/again`), { method: 'POST', body: 'x' }, () => {}),
    );
    assert.equal(sockets.size, before, 'no new connection for the second call');
  });

  it('a body-less status answers a Response without a body', async () => {
    const response = await createNodeHttpTransport()(`${url}/empty`, { method: 'GET' }, () => {});
    assert.equal(response.status, 204);
    assert.equal(response.body, null);
    assert.equal(response.headers.get('x-kind'), 'empty');
  });

  it('a refused connection is a TypeError "fetch failed" with the cause, as undici reports it', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await createNodeHttpTransport()(`http://127.0.0.1:${port}/`, {}, () => {}).catch(
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof TypeError);
    assert.equal(error.message, 'fetch failed');
    assert.equal((error.cause as { code?: string }).code, 'ECONNREFUSED');
  });

  it('an abort mid-stream ends the body with the abort and closes the request the server sees', async () => {
    const controller = new AbortController();
    const response = await createNodeHttpTransport()(
      `${url}/hang`,
      { method: 'POST', body: '{}', signal: controller.signal },
      () => {},
    );
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value), 'data: first\n\n');
    controller.abort();
    await assert.rejects(reader.read(), (error: Error) => error.name === 'AbortError');
    await waitFor('the server saw the connection close', () => closedEarly === 1);

    // A reader that cancels the body ends the request the server sees, too.
    const cancelled = await createNodeHttpTransport()(`${url}/hang`, { method: 'POST' }, () => {});
    const cancelReader = (cancelled.body as ReadableStream<Uint8Array>).getReader();
    await cancelReader.read();
    await cancelReader.cancel();
    await waitFor('the server saw the cancelled body close', () => closedEarly === 2);

    // Aborted before it was sent: nothing goes out.
    const count = seen.length;
    await assert.rejects(
      createNodeHttpTransport()(`${url}/x`, { signal: AbortSignal.abort() }, () => {}),
      (error: Error) => error.name === 'AbortError',
    );
    assert.equal(seen.length, count);
  });

  it('a connection cut mid-body errors the body instead of ending it as if complete', async () => {
    const response = await createNodeHttpTransport()(`${url}/reset`, { method: 'POST' }, () => {});
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value), 'data: first\n\n');
    await assert.rejects(reader.read());
  });

  it('a large body waits in the socket for a slow reader, then arrives whole and in order', async () => {
    const response = await createNodeHttpTransport()(`${url}/large`, { method: 'GET' }, () => {});
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let offset = 0;
    let wrong = -1;
    const take = (value: Uint8Array): void => {
      for (let i = 0; i < value.length && wrong < 0; i++) {
        if (value[i] !== (offset + i) % 256) wrong = offset + i;
      }
      offset += value.length;
    };
    take((await reader.read()).value as Uint8Array);
    // Backpressure: with the reader idle, the socket pauses, so the server's writes stop
    // once the loopback buffers are full (a few MiB); without it the transport would read
    // all 32 MiB into memory. Wait until the server has written nothing new for 200 ms.
    let written = -1;
    while (written !== largeWritten && !largeSent) {
      written = largeWritten;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.equal(
      largeSent,
      false,
      `the server finished while the reader waited (${written} bytes)`,
    );
    assert.ok(written < LARGE / 2, `${written} bytes written while the reader waited`);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      take(value);
    }
    assert.equal(wrong, -1, 'every byte in order');
    assert.equal(offset, LARGE);
    await waitFor('the server finished writing', () => largeSent);
  });
});
