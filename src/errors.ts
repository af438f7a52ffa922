// The error catalogue: every error keel raises on purpose has a stable code, an HTTP
// status, whether retrying can help, and a public message. docs/http-api.md lists the
// same codes; test/error-catalogue.test.ts keeps the two in step.

export interface CatalogueEntry {
  status: number;
  retryable: boolean;
  message: string;
}

export const ERROR_CATALOGUE = {
  VALIDATION_FAILED: { status: 400, retryable: false, message: 'the request is not valid' },
  INVALID_JSON: { status: 400, retryable: false, message: 'the body is not valid JSON' },
  INVALID_TOML: { status: 400, retryable: false, message: 'the body is not valid TOML' },
  UNKNOWN_FIELD: { status: 400, retryable: false, message: 'the request has an unknown field' },
  UNAUTHENTICATED: { status: 401, retryable: false, message: 'a valid bearer token is required' },
  FORBIDDEN: { status: 403, retryable: false, message: 'this token may not do that' },
  CROSS_SITE_REQUEST: {
    status: 403,
    retryable: false,
    message: 'cross-site requests are refused',
  },
  HOST_NOT_ALLOWED: {
    status: 403,
    retryable: false,
    message: 'without an admin token only loopback Host headers are accepted',
  },
  ROUTE_NOT_FOUND: { status: 404, retryable: false, message: 'no such route' },
  TENANT_NOT_FOUND: { status: 404, retryable: false, message: 'tenant not found' },
  AGENT_NOT_FOUND: { status: 404, retryable: false, message: 'agent not found' },
  RUN_NOT_FOUND: { status: 404, retryable: false, message: 'run not found' },
  TOKEN_NOT_FOUND: { status: 404, retryable: false, message: 'token not found' },
  THREAD_NOT_FOUND: { status: 404, retryable: false, message: 'thread not found' },
  DELIVERY_NOT_FOUND: { status: 404, retryable: false, message: 'delivery not found' },
  ARTIFACT_NOT_FOUND: { status: 404, retryable: false, message: 'artifact not found' },
  SCHEDULE_NOT_FOUND: { status: 404, retryable: false, message: 'schedule not found' },
  MEMORY_NOT_FOUND: { status: 404, retryable: false, message: 'memory fact not found' },
  METHOD_NOT_ALLOWED: { status: 405, retryable: false, message: 'method not allowed' },
  SCOPE_BUSY: { status: 409, retryable: true, message: 'the scope already has a run' },
  CONFLICT: { status: 409, retryable: false, message: 'the resource changed meanwhile' },
  CLAIM_EXPIRED: { status: 409, retryable: false, message: 'the claim has expired' },
  EMBEDDER_MISMATCH: {
    status: 409,
    retryable: false,
    message: 'memory vectors were made by another embedder; run keel memory reindex',
  },
  CLAIM_TOKEN_MISMATCH: {
    status: 409,
    retryable: false,
    message: 'the claim token does not match',
  },
  DELIVERY_NOT_CLAIMED: { status: 409, retryable: false, message: 'the delivery is not claimed' },
  REQUEST_TIMEOUT: {
    status: 408,
    retryable: true,
    message: 'the request did not arrive in time',
  },
  PAYLOAD_TOO_LARGE: { status: 413, retryable: false, message: 'the body is too large' },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    retryable: false,
    message: 'the content type is not supported',
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    retryable: false,
    message: 'this request_id was used for a different request',
  },
  RATE_LIMITED: { status: 429, retryable: true, message: 'too many requests' },
  QUOTA_EXCEEDED: {
    status: 403,
    retryable: false,
    message: 'the tenant is at one of its quotas (tenant_limits)',
  },
  OVERLOADED: { status: 503, retryable: true, message: 'the server is overloaded' },
  STORE_UNAVAILABLE: { status: 503, retryable: true, message: 'the store is unavailable' },
  EMBEDDER_UNAVAILABLE: {
    status: 503,
    retryable: true,
    message: 'the memory embedder is unavailable',
  },
  INTERNAL: { status: 500, retryable: true, message: 'internal error' },

  // Run failure codes: they end up in a run's `error`, not as HTTP statuses of a request.
  MAX_STEPS_EXCEEDED: {
    status: 500,
    retryable: false,
    message: 'max_steps reached before a final answer',
  },
  RUN_TIMEOUT: { status: 500, retryable: false, message: 'the run exceeded its timeout_ms' },
  PROVIDER_ERROR: { status: 502, retryable: true, message: 'the model provider failed' },
  MODEL_NOT_FOUND: {
    status: 400,
    retryable: false,
    message: 'the agent names a provider that is not configured',
  },
  OUTPUT_INVALID: {
    status: 500,
    retryable: false,
    message: 'the final answer does not match output_schema',
  },
  EFFECT_OUTCOME_UNKNOWN: {
    status: 500,
    retryable: false,
    message: 'an effectful tool call was in flight when the runtime stopped',
  },
  CANCELLED: { status: 409, retryable: false, message: 'the run was cancelled' },
  LEASE_LOST: {
    status: 409,
    retryable: false,
    message: 'this worker no longer holds the run (stale attempt)',
  },

  // Startup and operator errors: printed by the CLI, never sent to an HTTP caller.
  CONFIG_INVALID: { status: 500, retryable: false, message: 'the configuration is not valid' },
  STORE_SCHEMA_NEWER: {
    status: 500,
    retryable: false,
    message: 'the database was written by a newer keel',
  },
  STORE_SETTINGS_INVALID: {
    status: 500,
    retryable: false,
    message: 'the store did not accept its required settings',
  },
  DATA_DIR_LOCKED: {
    status: 500,
    retryable: false,
    message: 'another keel process owns this data dir',
  },
  INSECURE_LISTEN: {
    status: 500,
    retryable: false,
    message: 'a non-loopback listener needs an admin token',
  },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export class KeelError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message?: string, details?: Record<string, unknown>) {
    const entry: CatalogueEntry = ERROR_CATALOGUE[code];
    super(message ?? entry.message);
    this.name = 'KeelError';
    this.code = code;
    this.status = entry.status;
    this.retryable = entry.retryable;
    this.details = details;
  }
}

export function isKeelError(error: unknown, code?: ErrorCode): error is KeelError {
  return error instanceof KeelError && (code === undefined || error.code === code);
}
