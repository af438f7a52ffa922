// Address classification for the public-web boundary, on parsed addresses, never on
// strings: "127.1", "0x7f000001", "017700000001", "[::ffff:7f00:1]" are all 127.0.0.1
// here. Parsing and range matching are ipaddr.js's; the blocked ranges and their reasons
// are keel's (docs/web-boundary.md). Only global unicast is public; IPv6 forms that carry
// an IPv4 address inside (mapped, compatible, NAT64 64:ff9b::/96, 6to4) are judged by
// that IPv4 address.

import ipaddr from 'ipaddr.js';

export type Verdict = { public: true } | { public: false; reason: string };

export interface ParsedAddress {
  family: 4 | 6;
  bytes: Uint8Array;
}

/**
 * IPv4 in every spelling inet_aton and the WHATWG URL parser accept: 1–4 parts, each
 * decimal, octal (leading 0) or hex (0x); the last part fills the remaining bytes.
 * ipaddr.js parses all of these; two spellings it refuses are normalised first: a
 * trailing dot ("127.0.0.1.", an FQDN's root) and an empty hex part ("0x", which
 * inet_aton and WHATWG read as 0).
 */
function parseIPv4(text: string): Uint8Array | null {
  const parts = text.split('.');
  if (parts.length > 1 && parts.at(-1) === '') parts.pop();
  const spelled = parts.map((part) => (/^0x$/i.test(part) ? '0' : part)).join('.');
  if (!ipaddr.IPv4.isValid(spelled)) return null;
  return Uint8Array.from(ipaddr.IPv4.parse(spelled).toByteArray());
}

/** IPv6 text (no brackets, no zone id) to 16 bytes; an embedded dotted IPv4 tail is allowed. */
function parseIPv6(text: string): Uint8Array | null {
  // A zone id ("fe80::1%eth0") names an interface, not a host: not a literal keel accepts.
  if (text.includes('%') || !ipaddr.IPv6.isValid(text)) return null;
  const bytes = Uint8Array.from(ipaddr.IPv6.parse(text).toByteArray());
  // ipaddr.js reads the deprecated IPv4-compatible "::a.b.c.d" as IPv4-mapped
  // "::ffff:a.b.c.d"; RFC 4291 says its first 96 bits are zero, so the pinned address
  // stays the one the text names.
  if (/^::[^:]*\./.test(text)) bytes.fill(0, 10, 12);
  return bytes;
}

/** An IP literal (IPv4 in any spelling, IPv6 with or without brackets), or null for a name. */
export function parseIpLiteral(host: string): ParsedAddress | null {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare.includes(':')) {
    const bytes = parseIPv6(bare);
    return bytes ? { family: 6, bytes } : null;
  }
  const bytes = parseIPv4(bare);
  return bytes ? { family: 4, bytes } : null;
}

interface Range<T> {
  network: T;
  bits: number;
  reason: string;
  /** Where an IPv6 form carries an IPv4 address that decides instead (byte offset). */
  carriesIPv4At?: number;
}

function v4(cidr: string, reason: string): Range<ipaddr.IPv4> {
  const [network, bits] = ipaddr.IPv4.parseCIDR(cidr);
  return { network, bits, reason };
}

function v6(cidr: string, reason: string, carriesIPv4At?: number): Range<ipaddr.IPv6> {
  const [network, bits] = ipaddr.IPv6.parseCIDR(cidr);
  return { network, bits, reason, ...(carriesIPv4At === undefined ? {} : { carriesIPv4At }) };
}

// IANA special-purpose IPv4 ranges that are not public.
const IPV4_BLOCKED = [
  v4('0.0.0.0/8', '"this network" 0.0.0.0/8'),
  v4('10.0.0.0/8', 'private 10.0.0.0/8'),
  v4('100.64.0.0/10', 'carrier-grade NAT 100.64.0.0/10'),
  v4('127.0.0.0/8', 'loopback 127.0.0.0/8'),
  v4('169.254.0.0/16', 'link-local 169.254.0.0/16 (cloud metadata)'),
  v4('172.16.0.0/12', 'private 172.16.0.0/12'),
  v4('192.0.0.0/24', 'IETF protocol assignments 192.0.0.0/24'),
  v4('192.0.2.0/24', 'documentation 192.0.2.0/24'),
  v4('192.88.99.0/24', '6to4 relay anycast 192.88.99.0/24'),
  v4('192.168.0.0/16', 'private 192.168.0.0/16'),
  v4('198.18.0.0/15', 'benchmarking 198.18.0.0/15'),
  v4('198.51.100.0/24', 'documentation 198.51.100.0/24'),
  v4('203.0.113.0/24', 'documentation 203.0.113.0/24'),
  v4('224.0.0.0/4', 'multicast 224.0.0.0/4'),
  v4('240.0.0.0/4', 'reserved 240.0.0.0/4 (and broadcast 255.255.255.255)'),
];

// IPv6 ranges that are not public, first match wins; :: and ::1 are checked before.
const IPV6_BLOCKED = [
  v6('::ffff:0:0/96', 'IPv4-mapped ::ffff:0:0/96', 12),
  v6('::/96', 'IPv4-compatible ::/96', 12), // deprecated
  v6('64:ff9b::/96', 'NAT64 64:ff9b::/96', 12),
  v6('64:ff9b:1::/48', 'local-use NAT64 64:ff9b:1::/48'),
  v6('2002::/16', '6to4 2002::/16', 2),
  v6('2001::/32', 'Teredo 2001::/32'),
  v6('2001::/23', 'IETF protocol assignments 2001::/23'),
  v6('2001:db8::/32', 'documentation 2001:db8::/32'),
  v6('3fff::/20', 'documentation 3fff::/20'),
  v6('100::/64', 'discard-only 100::/64'),
  v6('fc00::/7', 'unique local fc00::/7'),
  v6('fe80::/10', 'link-local fe80::/10'),
  v6('fec0::/10', 'site-local fec0::/10'),
  v6('ff00::/8', 'multicast ff00::/8'),
];
const GLOBAL_UNICAST = v6('2000::/3', 'global unicast');

function classifyIPv4(bytes: Uint8Array): Verdict {
  const address = new ipaddr.IPv4([...bytes]);
  const blocked = IPV4_BLOCKED.find(({ network, bits }) => address.match(network, bits));
  return blocked ? { public: false, reason: blocked.reason } : { public: true };
}

function classifyIPv6(bytes: Uint8Array): Verdict {
  const address = new ipaddr.IPv6([...bytes]);
  const range = address.range();
  if (range === 'unspecified') return { public: false, reason: 'unspecified ::' };
  if (range === 'loopback') return { public: false, reason: 'loopback ::1' };
  const blocked = IPV6_BLOCKED.find(({ network, bits }) => address.match(network, bits));
  if (blocked?.carriesIPv4At !== undefined) {
    const at = blocked.carriesIPv4At;
    const verdict = classifyIPv4(bytes.slice(at, at + 4));
    if (verdict.public) return verdict;
    return { public: false, reason: `${blocked.reason} carrying ${verdict.reason}` };
  }
  if (blocked) return { public: false, reason: blocked.reason };
  // Everything else outside global unicast 2000::/3 is reserved.
  if (!address.match(GLOBAL_UNICAST.network, GLOBAL_UNICAST.bits)) {
    return { public: false, reason: 'reserved (outside 2000::/3)' };
  }
  return { public: true };
}

export function classifyAddress(address: ParsedAddress): Verdict {
  return address.family === 4 ? classifyIPv4(address.bytes) : classifyIPv6(address.bytes);
}

/** The canonical text of an address (dotted quad, or full lower-case IPv6 groups). */
export function formatAddress(address: ParsedAddress): string {
  return address.family === 4
    ? new ipaddr.IPv4([...address.bytes]).toString()
    : new ipaddr.IPv6([...address.bytes]).toNormalizedString();
}
