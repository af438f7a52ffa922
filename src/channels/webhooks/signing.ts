// Standard Webhooks signing (https://www.standardwebhooks.com): a `whsec_` secret of
// random bytes, and `v1,<base64 HMAC-SHA256>` over `<id>.<timestamp>.<body>` sent in the
// webhook-id / webhook-timestamp / webhook-signature headers, so any receiver can check
// it with a Standard Webhooks library.

import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** A fresh signing secret; keel shows it to the tenant once. */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return Buffer.from(encoded, 'base64');
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The three headers for one message; `id` stays the same across retries of it. */
export function signWebhook(
  secret: string,
  id: string,
  timestampS: number,
  body: string,
): SignedHeaders {
  const signature = createHmac('sha256', secretKey(secret))
    .update(`${id}.${timestampS}.${body}`, 'utf8')
    .digest('base64');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': `v1,${signature}`,
  };
}
