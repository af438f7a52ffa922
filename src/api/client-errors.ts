// Requests Node's HTTP parser rejects before fastify sees them (broken framing, header
// overflow) still get keel's error shape and a request id, then the socket is closed.

import type { Socket } from 'node:net';
import { ERROR_CATALOGUE } from '../errors.ts';
import { newRequestId } from './request-id.ts';

export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const requestId = newRequestId();
    const message =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? 'the request headers are too large'
        : 'the HTTP request is malformed';
    const body = JSON.stringify({
      error: { code: 'VALIDATION_FAILED', message, request_id: requestId },
    });
    const status = ERROR_CATALOGUE.VALIDATION_FAILED.status;
    socket.write(
      `HTTP/1.1 ${status} Bad Request\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
