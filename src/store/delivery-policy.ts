// What both backends' outboxes share: the retry backoff and how claim tokens are kept
// (only their sha256 is stored; a presented token is compared in constant time).

import { createHash, timingSafeEqual } from 'node:crypto';

const BACKOFF_BASE_MS = 1000;
const BACKOFF_CAP_MS = 5 * 60 * 1000;
const BACKOFF_JITTER = 0.2;

/** Exponential from 1 s, capped at 5 min, ±20 % jitter so retries do not bunch up. */
export function deliveryBackoffMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(BACKOFF_BASE_MS * 2 ** Math.max(0, attempt - 1), BACKOFF_CAP_MS);
  return Math.round(base * (1 - BACKOFF_JITTER + 2 * BACKOFF_JITTER * random()));
}

export function hashClaimToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function claimTokenMatches(storedHash: string | null, token: string): boolean {
  if (storedHash === null) return false;
  return timingSafeEqual(Buffer.from(storedHash, 'hex'), Buffer.from(hashClaimToken(token), 'hex'));
}
