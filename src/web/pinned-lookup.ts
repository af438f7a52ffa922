// A `lookup` for undici's connect that answers one checked address, whatever DNS says
// later: how web_fetch, webhooks and MCP over HTTP pin a connection to the address the
// public-web boundary checked (docs/web-boundary.md). A leaf, so its users do not load
// the fetcher (undici, htmlparser2) with keel.

import type { LookupAddress } from 'node:dns';
import type { ParsedAddress } from './address.ts';
import { formatAddress } from './address.ts';

export function pinnedLookup(address: ParsedAddress) {
  const text = formatAddress(address);
  return (
    _hostname: string,
    options: { all?: boolean } | undefined,
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    if (options?.all) callback(null, [{ address: text, family: address.family }]);
    else callback(null, text, address.family);
  };
}
