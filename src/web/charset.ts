// Which encoding a response body is in, and its bytes as text. The order is WHATWG's
// (HTML's encoding sniffing, without the locale guess):
//   1. a byte order mark (UTF-8, UTF-16LE, UTF-16BE) wins over everything;
//   2. the charset of the Content-Type header, if TextDecoder knows the label;
//   3. HTML: the first <meta charset> / <meta http-equiv="content-type"> in the first
//      1024 bytes; XML: the encoding of the <?xml …?> declaration;
//   4. UTF-8.
// Labels are resolved by TextDecoder, which knows the WHATWG label table ("latin1" and
// "iso-8859-1" mean windows-1252, "sjis" is Shift_JIS…). windows-1252 itself is decoded
// here: Node 20's TextDecoder takes it for plain latin1 (nodejs/node#60888) and turns
// 0x80 into U+0080 instead of €.

const PRESCAN_BYTES = 1024;

/** WHATWG index-windows-1252 for 0x80–0x9F; every other byte is its own code point. */
const WINDOWS_1252_HIGH = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ';

/** The WHATWG name of an encoding label TextDecoder supports, else null. */
function encodingFor(label: string): string | null {
  try {
    return new TextDecoder(label.trim()).encoding;
  } catch {
    return null;
  }
}

function byteOrderMark(bytes: Uint8Array): string | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  return null;
}

/** The start of the body, one character per byte: what the ASCII patterns below read. */
function prescanText(bytes: Uint8Array): string {
  return Buffer.from(
    bytes.buffer,
    bytes.byteOffset,
    Math.min(bytes.length, PRESCAN_BYTES),
  ).toString('latin1');
}

const ATTRIBUTE = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g;

function attributesOf(tagBody: string): Map<string, string> {
  const attributes = new Map<string, string>();
  for (const match of tagBody.matchAll(ATTRIBUTE)) {
    const name = (match[1] ?? '').toLowerCase();
    // As in HTML, a repeated attribute does not override the first.
    if (!attributes.has(name)) attributes.set(name, match[2] ?? match[3] ?? match[4] ?? '');
  }
  return attributes;
}

/** The charset inside a Content-Type value, read the way HTML reads a meta's content. */
function charsetInContent(content: string): string | null {
  const match = /charset\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s;"']+))/i.exec(content);
  return match ? (match[1] ?? match[2] ?? match[3] ?? null) : null;
}

/** A meta's label as HTML's prescan takes it: UTF-16 cannot be what ASCII bytes said. */
function metaEncoding(label: string): string | null {
  if (label.trim().toLowerCase() === 'x-user-defined') return 'windows-1252';
  const encoding = encodingFor(label);
  return encoding === 'utf-16le' || encoding === 'utf-16be' ? 'utf-8' : encoding;
}

/** HTML's prescan, simplified: the first <meta> in the first 1024 bytes naming a known encoding. */
function prescanHtml(bytes: Uint8Array): string | null {
  // A comment hides what it contains; one still open at the limit hides the rest.
  const visible = prescanText(bytes).replace(/<!--[\s\S]*?(?:-->|$)/g, ' ');
  for (const tag of visible.matchAll(/<meta[\s/]([^>]*)/gi)) {
    const attributes = attributesOf(tag[1] ?? '');
    const charset = attributes.get('charset');
    const label =
      charset !== undefined
        ? charset
        : attributes.get('http-equiv')?.toLowerCase() === 'content-type'
          ? charsetInContent(attributes.get('content') ?? '')
          : null;
    const encoding = label ? metaEncoding(label) : null;
    if (encoding) return encoding;
  }
  return null;
}

function xmlDeclaration(bytes: Uint8Array): string | null {
  const match = /^<\?xml\s[^>]*?\bencoding\s*=\s*["']([^"']+)["']/.exec(prescanText(bytes));
  return match?.[1] ? metaEncoding(match[1]) : null;
}

function isXml(type: string): boolean {
  return /(^|\/|\+)xml$/.test(type);
}

/** The encoding to decode a body with, from its bytes, the header charset and the media type. */
export function sniffEncoding(
  bytes: Uint8Array,
  headerCharset: string | null,
  type: string,
): string {
  const fromHeader = headerCharset === null ? null : encodingFor(headerCharset);
  return (
    byteOrderMark(bytes) ??
    fromHeader ??
    (type === 'text/html' ? prescanHtml(bytes) : null) ??
    (isXml(type) ? xmlDeclaration(bytes) : null) ??
    'utf-8'
  );
}

function decodeWindows1252(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    .toString('latin1')
    .replace(/[\u0080-\u009f]/g, (char) => WINDOWS_1252_HIGH[char.charCodeAt(0) - 0x80] ?? char);
}

/**
 * The bytes as text; invalid sequences become U+FFFD and a BOM of the encoding is
 * dropped. `complete: false` (a body cut at the cap) leaves out a character the cut
 * split, instead of ending the text with U+FFFD.
 */
export function decodeText(bytes: Uint8Array, encoding: string, complete: boolean): string {
  if (encoding === 'windows-1252') return decodeWindows1252(bytes);
  return new TextDecoder(encoding).decode(bytes, { stream: !complete });
}
