// The headers every artifact response carries, so bytes a tenant (or a model) stored
// under keel's own origin can never run as keel's origin. In tokenless mode any page on
// that origin is trusted by the cross-site check (src/api/cross-site.ts); an HTML or SVG
// artifact opened in the browser would otherwise run its script there and drive the API.
//   - `Content-Security-Policy: sandbox; default-src 'none'`: the document gets an opaque
//     origin and no script, form, plugin or fetch; even an inline image stays inert.
//   - `X-Content-Type-Options: nosniff`: the browser uses the stored type, never a guess.
//   - `Content-Disposition: attachment` unless the type is on a short list of passive
//     types a browser only displays (images other than SVG, plain text, JSON): the rest
//     (HTML, XHTML, SVG, XML, JavaScript, PDF, unknown types) is downloaded, not shown.

/** Types a browser shows without running anything; everything else is an attachment. */
const PASSIVE_TYPES: ReadonlySet<string> = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'text/plain',
  'application/json',
]);

export const ARTIFACT_CSP = "sandbox; default-src 'none'";

/** `type/subtype` of a Content-Type value, lower-cased, without its parameters. */
function essence(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

export function isPassiveType(contentType: string): boolean {
  return PASSIVE_TYPES.has(essence(contentType));
}

/** RFC 6266 with the RFC 8187 UTF-8 form of the last path segment as the file name. */
function attachment(path: string): string {
  const name = path.split('/').pop() || 'artifact';
  return `attachment; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/** The safety headers of one artifact response (also on 304, so a cached copy has them). */
export function artifactHeaders(path: string, contentType: string): Record<string, string> {
  const headers: Record<string, string> = {
    'content-security-policy': ARTIFACT_CSP,
    'x-content-type-options': 'nosniff',
  };
  if (!isPassiveType(contentType)) headers['content-disposition'] = attachment(path);
  return headers;
}
