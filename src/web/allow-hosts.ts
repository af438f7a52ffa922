// The operator's `allow_hosts` entries ([web], [mcp], [webhooks]): the one opening of the
// public-web boundary (docs/web-boundary.md). An entry is a host — a name, an IPv4
// literal, an IPv6 literal with or without brackets — optionally with a port:
//
//   "127.0.0.1:9000", "[::1]:8443", "models.lan:11434"  that host on that port only;
//   "127.0.0.1", "::1", "models.lan"                     that host on any port.
//
// Before ports were read, "127.0.0.1:9000" opened nothing and "127.0.0.1" opened every
// port — keel's own API included; naming the port is how an operator opens one service.
// Hosts compare case-insensitively, without trailing dots, IP literals in canonical form.

import { formatAddress, parseIpLiteral } from './address.ts';

export interface AllowedHost {
  host: string;
  /** null: any port. */
  port: number | null;
}

/** Lower case, no trailing dot, no brackets, IP literals canonical (::0:1 → ::1). */
export function canonicalHost(host: string): string {
  const bare = host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.+$/, '');
  const literal = parseIpLiteral(bare);
  return literal ? formatAddress(literal) : bare;
}

/** An entry parsed, or why it is not one (keel.toml is refused at startup with it). */
export function parseAllowedHost(entry: string): AllowedHost | string {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry);
  const colons = entry.split(':').length - 1;
  const [, host, port] =
    bracketed ??
    // Two colons or more without brackets: an IPv6 literal, which cannot carry a port.
    (colons > 1 ? [entry, entry, undefined] : /^([^:]*)(?::(\d{1,5}))?$/.exec(entry)) ??
    [];
  if (host === undefined || !/^[^\s/@?#[\]]+$/.test(host)) {
    return `"${entry}" is not a host or host:port`;
  }
  if (bracketed && !parseIpLiteral(host)) return `"${entry}": only IPv6 literals go in brackets`;
  if (colons > 1 && !bracketed && !parseIpLiteral(host)) {
    return `"${entry}" is not a host or host:port (an IPv6 literal with a port is [addr]:port)`;
  }
  const portNumber = port === undefined ? null : Number(port);
  if (portNumber !== null && (portNumber < 1 || portNumber > 65_535)) {
    return `"${entry}": the port must be 1–65535`;
  }
  return { host: canonicalHost(host), port: portNumber };
}

/** The port a request to `url` connects to (the scheme's default when none is written). */
function portOf(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/** Does one of `entries` open `url`'s host and port? Unparsable entries open nothing. */
export function hostAllowList(entries: readonly string[]): (url: URL) => boolean {
  const allowed = entries
    .map(parseAllowedHost)
    .filter((entry): entry is AllowedHost => typeof entry !== 'string');
  return (url) => {
    const host = canonicalHost(url.hostname);
    const port = portOf(url);
    return allowed.some((entry) => entry.host === host && (entry.port ?? port) === port);
  };
}
