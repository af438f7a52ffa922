// Address classification for the public-web boundary, on parsed address BYTES, never on
// strings: "127.1", "0x7f000001", "017700000001", "[::ffff:7f00:1]" are all 127.0.0.1
// here. Only global unicast is public; IPv6 forms that carry an IPv4 address inside
// (mapped, compatible, NAT64 64:ff9b::/96, 6to4) are judged by that IPv4 address.

export type Verdict = { public: true } | { public: false; reason: string };

export interface ParsedAddress {
  family: 4 | 6;
  bytes: Uint8Array;
}

function parseIPv4Part(part: string): number | null {
  if (part === '') return null;
  let value: number;
  if (/^0x[0-9a-f]*$/i.test(part)) value = part.length === 2 ? 0 : parseInt(part.slice(2), 16);
  else if (/^0[0-7]+$/.test(part)) value = parseInt(part.slice(1), 8);
  else if (/^(0|[1-9][0-9]*)$/.test(part)) value = Number(part);
  else return null;
  return Number.isSafeInteger(value) ? value : null;
}

/**
 * IPv4 in every spelling inet_aton and the WHATWG URL parser accept: 1–4 parts, each
 * decimal, octal (leading 0) or hex (0x); the last part fills the remaining bytes.
 */
export function parseIPv4(text: string): Uint8Array | null {
  const parts = text.split('.');
  if (parts.length > 1 && parts.at(-1) === '') parts.pop(); // "127.0.0.1." (trailing dot)
  if (parts.length < 1 || parts.length > 4) return null;
  const values = parts.map(parseIPv4Part);
  if (values.some((value) => value === null)) return null;
  const numbers = values as number[];
  const last = numbers.pop() as number;
  if (numbers.some((value) => value > 255)) return null;
  if (last >= 256 ** (4 - numbers.length)) return null;
  const bytes = new Uint8Array(4);
  numbers.forEach((value, index) => (bytes[index] = value));
  for (let index = 3; index >= numbers.length; index -= 1) {
    bytes[index] = Math.floor(last / 256 ** (3 - index)) % 256;
  }
  return bytes;
}

/** IPv6 text (no brackets, no zone id) to 16 bytes; an embedded dotted IPv4 tail is allowed. */
export function parseIPv6(text: string): Uint8Array | null {
  if (text.includes('%') || !/^[0-9a-f:.]+$/i.test(text)) return null;
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groupsOf = (half: string): number[] | null => {
    if (half === '') return [];
    const groups: number[] = [];
    const pieces = half.split(':');
    for (const [index, piece] of pieces.entries()) {
      if (piece.includes('.')) {
        if (index !== pieces.length - 1) return null;
        if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(piece)) return null;
        const v4 = piece.split('.').map(Number);
        if (v4.some((value) => value > 255)) return null;
        groups.push(((v4[0] as number) << 8) | (v4[1] as number));
        groups.push(((v4[2] as number) << 8) | (v4[3] as number));
      } else {
        if (!/^[0-9a-f]{1,4}$/i.test(piece)) return null;
        groups.push(parseInt(piece, 16));
      }
    }
    return groups;
  };
  const head = groupsOf(halves[0] as string);
  const tail = halves.length === 2 ? groupsOf(halves[1] as string) : [];
  if (!head || !tail) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...head, ...Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  groups.forEach((group, index) => {
    bytes[index * 2] = group >> 8;
    bytes[index * 2 + 1] = group & 0xff;
  });
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

function inV4(
  bytes: Uint8Array,
  a: number,
  b: number,
  c: number,
  d: number,
  bits: number,
): boolean {
  const value =
    (((bytes[0] as number) << 24) |
      ((bytes[1] as number) << 16) |
      ((bytes[2] as number) << 8) |
      (bytes[3] as number)) >>>
    0;
  const network = ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return (value & mask) >>> 0 === (network & mask) >>> 0;
}

// [a, b, c, d, prefix bits, why]: IANA special-purpose IPv4 ranges that are not public.
const IPV4_BLOCKED: [number, number, number, number, number, string][] = [
  [0, 0, 0, 0, 8, '"this network" 0.0.0.0/8'],
  [10, 0, 0, 0, 8, 'private 10.0.0.0/8'],
  [100, 64, 0, 0, 10, 'carrier-grade NAT 100.64.0.0/10'],
  [127, 0, 0, 0, 8, 'loopback 127.0.0.0/8'],
  [169, 254, 0, 0, 16, 'link-local 169.254.0.0/16 (cloud metadata)'],
  [172, 16, 0, 0, 12, 'private 172.16.0.0/12'],
  [192, 0, 0, 0, 24, 'IETF protocol assignments 192.0.0.0/24'],
  [192, 0, 2, 0, 24, 'documentation 192.0.2.0/24'],
  [192, 88, 99, 0, 24, '6to4 relay anycast 192.88.99.0/24'],
  [192, 168, 0, 0, 16, 'private 192.168.0.0/16'],
  [198, 18, 0, 0, 15, 'benchmarking 198.18.0.0/15'],
  [198, 51, 100, 0, 24, 'documentation 198.51.100.0/24'],
  [203, 0, 113, 0, 24, 'documentation 203.0.113.0/24'],
  [224, 0, 0, 0, 4, 'multicast 224.0.0.0/4'],
  [240, 0, 0, 0, 4, 'reserved 240.0.0.0/4 (and broadcast 255.255.255.255)'],
];

export function classifyIPv4(bytes: Uint8Array): Verdict {
  for (const [a, b, c, d, bits, reason] of IPV4_BLOCKED) {
    if (inV4(bytes, a, b, c, d, bits)) return { public: false, reason };
  }
  return { public: true };
}

function prefixIs(bytes: Uint8Array, prefix: number[], bits: number): boolean {
  for (let bit = 0; bit < bits; bit += 1) {
    const byte = Math.floor(bit / 8);
    const mask = 0x80 >> (bit % 8);
    if (((bytes[byte] as number) & mask) !== ((prefix[byte] ?? 0) & mask)) return false;
  }
  return true;
}

function embedded(bytes: Uint8Array, offset: number, form: string): Verdict {
  const verdict = classifyIPv4(bytes.slice(offset, offset + 4));
  return verdict.public ? verdict : { public: false, reason: `${form} carrying ${verdict.reason}` };
}

export function classifyIPv6(bytes: Uint8Array): Verdict {
  const allZeroUpTo = (end: number): boolean => bytes.slice(0, end).every((byte) => byte === 0);
  if (allZeroUpTo(16)) return { public: false, reason: 'unspecified ::' };
  if (allZeroUpTo(15) && bytes[15] === 1) return { public: false, reason: 'loopback ::1' };
  if (allZeroUpTo(10) && bytes[10] === 0xff && bytes[11] === 0xff) {
    return embedded(bytes, 12, 'IPv4-mapped ::ffff:0:0/96');
  }
  // ::/96 minus :: and ::1 above: the deprecated IPv4-compatible form.
  if (allZeroUpTo(12)) return embedded(bytes, 12, 'IPv4-compatible ::/96');
  if (prefixIs(bytes, [0x00, 0x64, 0xff, 0x9b], 96))
    return embedded(bytes, 12, 'NAT64 64:ff9b::/96');
  if (prefixIs(bytes, [0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48)) {
    return { public: false, reason: 'local-use NAT64 64:ff9b:1::/48' };
  }
  if (prefixIs(bytes, [0x20, 0x02], 16)) return embedded(bytes, 2, '6to4 2002::/16');
  if (prefixIs(bytes, [0x20, 0x01, 0x00, 0x00], 32))
    return { public: false, reason: 'Teredo 2001::/32' };
  if (prefixIs(bytes, [0x20, 0x01, 0x00, 0x00], 23)) {
    return { public: false, reason: 'IETF protocol assignments 2001::/23' };
  }
  if (prefixIs(bytes, [0x20, 0x01, 0x0d, 0xb8], 32))
    return { public: false, reason: 'documentation 2001:db8::/32' };
  if (prefixIs(bytes, [0x3f, 0xff], 20))
    return { public: false, reason: 'documentation 3fff::/20' };
  if (prefixIs(bytes, [0x01, 0x00], 64)) return { public: false, reason: 'discard-only 100::/64' };
  if (prefixIs(bytes, [0xfc], 7)) return { public: false, reason: 'unique local fc00::/7' };
  if (prefixIs(bytes, [0xfe, 0x80], 10)) return { public: false, reason: 'link-local fe80::/10' };
  if (prefixIs(bytes, [0xfe, 0xc0], 10)) return { public: false, reason: 'site-local fec0::/10' };
  if (prefixIs(bytes, [0xff], 8)) return { public: false, reason: 'multicast ff00::/8' };
  // Everything else outside global unicast 2000::/3 is reserved.
  if (!prefixIs(bytes, [0x20], 3)) return { public: false, reason: 'reserved (outside 2000::/3)' };
  return { public: true };
}

export function classifyAddress(address: ParsedAddress): Verdict {
  return address.family === 4 ? classifyIPv4(address.bytes) : classifyIPv6(address.bytes);
}

/** The canonical text of an address (dotted quad, or full lower-case IPv6 groups). */
export function formatAddress(address: ParsedAddress): string {
  if (address.family === 4) return [...address.bytes].join('.');
  const groups: string[] = [];
  for (let index = 0; index < 16; index += 2) {
    groups.push(
      (((address.bytes[index] as number) << 8) | (address.bytes[index + 1] as number)).toString(16),
    );
  }
  return groups.join(':');
}
