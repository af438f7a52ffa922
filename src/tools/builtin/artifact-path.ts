// The artifact path rule of docs/http-api.md, shared by the HTTP routes and the tools:
// `/`-separated segments, none empty, `.` or `..`, at most 512 bytes of UTF-8, no
// control characters, no leading `/`. Checked on the decoded path, so a percent-encoded
// traversal (`%2e%2e/`) is refused like the plain one.

const MAX_ARTIFACT_PATH_BYTES = 512;
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What is wrong with `path`, or null when it is a valid artifact path. */
export function artifactPathProblem(path: string): string | null {
  if (path.length === 0) return 'must not be empty';
  if (Buffer.byteLength(path, 'utf8') > MAX_ARTIFACT_PATH_BYTES) {
    return `must be at most ${MAX_ARTIFACT_PATH_BYTES} bytes`;
  }
  if (CONTROL_CHARACTERS.test(path)) return 'must not contain control characters';
  if (LONE_SURROGATE.test(path)) return 'must be well-formed UTF-8';
  // A backslash is a separator to some clients and file systems; refusing it keeps
  // `..\\x` from ever meaning traversal anywhere an artifact path is reused.
  if (path.includes('\\')) return 'must not contain a backslash';
  if (path.startsWith('/')) return 'must not start with "/"';
  for (const segment of path.split('/')) {
    if (segment === '') return 'must not have an empty segment ("//" or a trailing "/")';
    if (segment === '.' || segment === '..') return 'must not have a "." or ".." segment';
  }
  return null;
}

/** The artifact reference tools hand out for content they do not inline. */
export function artifactRef(tenant: string, path: string): string {
  return `artifact://${tenant}/${path}`;
}
