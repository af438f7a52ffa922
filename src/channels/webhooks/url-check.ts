// The public-web boundary for a webhook URL (docs/threat-model.md): http(s) only, and
// every address the host resolves to must be public (src/web/address.ts) unless the
// operator allows the host ([webhooks] allow_hosts). The check answers the address to
// pin the connection to, so DNS cannot change between the check and the POST.

import type { ParsedAddress } from '../../web/address.ts';
import { checkPublicHost } from '../../web/public-host.ts';

export type UrlVerdict =
  { ok: true; url: URL; pinned: ParsedAddress | null } | { ok: false; reason: string };

/** Syntax only: what PUT T/webhooks/:name refuses before any lookup. */
export function parseWebhookUrl(text: string): URL | string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'not a valid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be http or https';
  if (url.username || url.password) return 'must not carry credentials';
  return url;
}

export async function checkWebhookUrl(
  text: string,
  allowHosts: readonly string[],
): Promise<UrlVerdict> {
  const url = parseWebhookUrl(text);
  if (typeof url === 'string') return { ok: false, reason: url };
  const verdict = await checkPublicHost(url, allowHosts, '[webhooks] allow_hosts');
  return verdict.ok ? { ok: true, url, pinned: verdict.pinned } : verdict;
}
