// The public-web boundary for a webhook URL (docs/threat-model.md): http(s) only, and
// every address the host resolves to must be public (src/web/address.ts) unless the
// operator allows the host ([webhooks] allow_hosts). The check answers the address to
// pin the connection to, so DNS cannot change between the check and the POST.

import { lookup } from 'node:dns/promises';
import type { ParsedAddress } from '../../web/address.ts';
import { classifyAddress, parseIpLiteral } from '../../web/address.ts';

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
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.+$/, '')
    .toLowerCase();
  if (allowHosts.some((allowed) => allowed.toLowerCase() === host)) {
    return { ok: true, url, pinned: null };
  }
  const literal = parseIpLiteral(host);
  const addresses = literal
    ? [literal]
    : (await lookup(host, { all: true }).catch(() => [])).map((entry) =>
        parseIpLiteral(entry.address),
      );
  if (addresses.length === 0) return { ok: false, reason: `${host} does not resolve` };
  for (const address of addresses) {
    const verdict = address ? classifyAddress(address) : { public: false, reason: 'unparsable' };
    if (!verdict.public) {
      return {
        ok: false,
        reason: `${host} is not a public address (${verdict.reason}); only the operator can allow it ([webhooks] allow_hosts)`,
      };
    }
  }
  return { ok: true, url, pinned: addresses[0] ?? null };
}
