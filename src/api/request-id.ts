// Request ids: accept a caller's `x-request-id` when it is short and plain (so it can be
// logged and echoed safely), otherwise mint `req-<random>`.

import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function newRequestId(): string {
  return `req-${randomBytes(12).toString('base64url')}`;
}

export function requestIdFor(raw: IncomingMessage): string {
  const incoming = raw.headers['x-request-id'];
  if (typeof incoming === 'string' && ACCEPTABLE_REQUEST_ID.test(incoming)) return incoming;
  return newRequestId();
}
