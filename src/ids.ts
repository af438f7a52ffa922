// Identifier generation and the identifier rules of docs/http-api.md.

import { randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';

export const NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const MAX_SCOPE_BYTES = 256;
// Control characters are C0, DEL and C1.
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function newRunId(): string {
  return uuidv7();
}

export function newId(): string {
  return uuidv7();
}

/** A random secret, URL-safe, 256 bits. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function isValidName(name: string): boolean {
  return NAME_PATTERN.test(name);
}

/** A scope is any UTF-8 string of 1–256 bytes without control characters. */
export function scopeProblem(scope: string): string | null {
  const bytes = Buffer.byteLength(scope, 'utf8');
  if (bytes < 1 || bytes > MAX_SCOPE_BYTES) return `must be 1–${MAX_SCOPE_BYTES} bytes of UTF-8`;
  if (CONTROL_CHARACTERS.test(scope)) return 'must not contain control characters';
  if (LONE_SURROGATE.test(scope)) return 'must be well-formed UTF-8';
  return null;
}

/** request_id: 1–200 printable characters. */
export function isValidRequestId(value: string): boolean {
  return value.length >= 1 && value.length <= 200 && !CONTROL_CHARACTERS.test(value);
}
