// Errors of the public-web boundary. Each has a stable code the tools pass to the model
// (as a tool error, the run goes on); docs/web-boundary.md lists them.

export const WEB_ERROR_CODES = [
  'WEB_INVALID_URL',
  'WEB_SCHEME_NOT_ALLOWED',
  'WEB_ADDRESS_BLOCKED',
  'WEB_DNS_FAILED',
  'WEB_TOO_MANY_REDIRECTS',
  'WEB_TIMEOUT',
  'WEB_HTTP_STATUS',
  'WEB_CONTENT_TYPE',
  'WEB_FETCH_FAILED',
  'WEB_SEARCH_DISABLED',
  'WEB_SEARCH_FAILED',
] as const;
export type WebErrorCode = (typeof WEB_ERROR_CODES)[number];

export class WebError extends Error {
  readonly code: WebErrorCode;
  constructor(code: WebErrorCode, message: string) {
    super(message);
    this.name = 'WebError';
    this.code = code;
  }
}
