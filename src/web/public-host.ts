// The public-web boundary for a URL that a tenant names for keel to call (an HTTP MCP
// server, a webhook): every address its host resolves to must be public
// (src/web/address.ts) unless the operator allows the host by name. The verdict carries
// the address to pin the connection to, so DNS cannot change between check and connect.

import { lookup } from 'node:dns/promises';
import type { ParsedAddress } from './address.ts';
import { classifyAddress, parseIpLiteral } from './address.ts';
import { hostAllowList } from './allow-hosts.ts';

export type PublicHostVerdict =
  { ok: true; pinned: ParsedAddress | null } | { ok: false; reason: string };

/** `allowSetting` names the operator's setting in the refusal (e.g. `[mcp] allow_hosts`). */
export async function checkPublicHost(
  url: URL,
  allowHosts: readonly string[],
  allowSetting: string,
): Promise<PublicHostVerdict> {
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.+$/, '')
    .toLowerCase();
  // host or host:port entries (src/web/allow-hosts.ts): a port named opens that port only.
  if (hostAllowList(allowHosts)(url)) return { ok: true, pinned: null };
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
        reason: `${host} is not a public address (${verdict.reason}); only the operator can allow it (${allowSetting})`,
      };
    }
  }
  return { ok: true, pinned: addresses[0] ?? null };
}
