// Requests Node's HTTP parser rejects before fastify sees them (broken framing, header
// overflow, the header and request deadlines) still get keel's error shape and a
// request id, then the socket is closed.

import type { Socket } from 'node:net';
import { ERROR_CATALOGUE } from '../errors.ts';
import { newRequestId } from './request-id.ts';

export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const requestId = newRequestId();
    // Node raises this when http.headers_timeout_ms or http.request_timeout_ms ran out.
    const timedOut = error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    const code = timedOut ? 'REQUEST_TIMEOUT' : 'VALIDATION_FAILED';
    const message = timedOut
      ? 'the request did not arrive in time'
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? 'the request headers are too large'
        : 'the HTTP request is malformed';
    const body = JSON.stringify({ error: { code, message, request_id: requestId } });
    const status = ERROR_CATALOGUE[code].status;
    socket.write(
      `HTTP/1.1 ${status} ${timedOut ? 'Request Timeout' : 'Bad Request'}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
