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
  MCP_SERVER_NOT_FOUND: { status: 404, retryable: false, message: 'MCP server not found' },
  SECRET_NOT_FOUND: { status: 404, retryable: false, message: 'secret not found' },
  WEBHOOK_NOT_FOUND: { status: 404, retryable: false, message: 'webhook not found' },
  WASM_TOOL_NOT_FOUND: { status: 404, retryable: false, message: 'WebAssembly tool not found' },
  WASM_MODULE_INVALID: {
    status: 400,
    retryable: false,
    message: 'the module is not a WASI preview-1 command module keel can run',
  },
  MCP_SERVER_FAILED: {
    status: 400,
    retryable: false,
    message: 'the MCP server could not be reached or listed bad tools',
  },
  METHOD_NOT_ALLOWED: { status: 405, retryable: false, message: 'method not allowed' },
  SCOPE_BUSY: { status: 409, retryable: true, message: 'the scope already has a run' },
  CONFLICT: { status: 409, retryable: false, message: 'the resource changed meanwhile' },
  APPROVAL_NOT_FOUND: { status: 404, retryable: false, message: 'no such approval' },
  APPROVAL_DECIDED: {
    status: 409,
    retryable: false,
    message: 'the approval was already decided, or its run no longer waits',
  },
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
  DELIVERY_NOT_DEAD: { status: 409, retryable: false, message: 'only a dead delivery is retried' },
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
  MODEL_TIMEOUT: {
    status: 504,
    retryable: true,
    message: "the model provider gave no complete answer within the provider's timeout_ms",
  },
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
  RUN_CRASHED: {
    status: 500,
    retryable: false,
    message: 'max_attempts attempts of the run crashed',
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
  // `keel backup` / `keel restore` (src/store/sqlite/backup.ts, docs/operations.md).
  BACKUP_INVALID: {
    status: 500,
    retryable: false,
    message: 'the file is not a keel database that passes its checks',
  },
  BACKUP_TARGET_EXISTS: {
    status: 500,
    retryable: false,
    message: 'the file or database to write already exists (--force replaces it)',
  },
  BACKEND_UNSUPPORTED: {
    status: 500,
    retryable: false,
    message: 'this command works on the SQLite store; PostgreSQL has its own tools',
  },
  INSECURE_LISTEN: {
    status: 500,
    retryable: false,
    message: 'a non-loopback listener needs an admin token',
  },
  CONTEXT_EXCEEDED: {
    status: 502,
    retryable: false,
    message: "the model input does not fit the model's context, even after a compaction",
  },
  // Usage budgets (src/store/rules/usage.ts): a new turn past the tenant's daily budget
  // (HTTP 429), or a run stopped by its own or its tenant's budget (a run error).
  BUDGET_EXCEEDED: {
    status: 429,
    retryable: false,
    message: 'a usage budget (tokens or cost) is used up',
  },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** The catalogue codes a run's `error` can carry (docs/http-api.md, "where: run"). */
export const RUN_ERROR_CODES = [
  'AGENT_NOT_FOUND',
  'MAX_STEPS_EXCEEDED',
  'RUN_TIMEOUT',
  'RUN_CRASHED',
  'PROVIDER_ERROR',
  'MODEL_TIMEOUT',
  'MODEL_NOT_FOUND',
  'OUTPUT_INVALID',
  'EFFECT_OUTCOME_UNKNOWN',
  'CANCELLED',
  'INTERNAL',
  'CONTEXT_EXCEEDED',
  'BUDGET_EXCEEDED',
] as const satisfies readonly ErrorCode[];
export type RunErrorCode = (typeof RUN_ERROR_CODES)[number];

/**
 * Codes of a `tool_result` error: what the model is told about one tool call (the run
 * goes on). Not HTTP errors; docs/reliability.md lists them. A tool's own ToolError may
 * also carry a catalogue code (e.g. SCHEDULE_NOT_FOUND) or a web boundary code.
 */
export const TOOL_RESULT_CODES = {
  // Raised by the runtime around every call (src/runtime/tool-step.ts).
  TOOL_NOT_FOUND: 'no tool of that name exists',
  TOOL_NOT_ALLOWED: 'the tool exists but is not visible to this agent',
  INVALID_ARGUMENTS: 'the arguments are not a JSON object text, or fail the tool schema',
  TOOL_FAILED: 'the tool threw (a ToolError keeps its own code instead)',
  TOOL_TIMEOUT: 'tool_timeout_ms (clamped to the run deadline) passed',
  TOOL_ABORTED: "the run's abort signal fired while the tool ran",
  OUTCOME_UNKNOWN: 'an effectful call was in flight when an earlier attempt stopped',
  TOOL_CRASHED: 'a repeatable call was in flight on two attempts that stopped; not run again',
  APPROVAL_DENIED: 'a person denied the call (the message is their note)',
  APPROVAL_TIMEOUT: "nobody decided within the agent's approval_timeout_ms",
  // Raised by built-in tools as ToolError.
  CALC_INVALID: 'the calculator expression is not valid',
  INVALID_TIMEZONE: 'not an IANA time zone',
  INVALID_PATH: 'not a valid artifact path',
  INVALID_BASE64: 'the body is not valid base64',
  INVALID_CURSOR: 'the listing cursor is not valid',
  INVALID_ARGUMENT: 'a capability refused an argument (memory tools)',
  INVALID_CONTENT_TYPE: 'not a valid artifact content type',
  ARTIFACT_TOO_LARGE: 'the artifact body exceeds its size limit',
  MEMORY_SCAN_REQUIRED: 'the memory maintainer must scan before it changes facts',
  ARTIFACTS_UNAVAILABLE: 'this process has no artifact port',
  SCHEDULES_UNAVAILABLE: 'this process has no schedule port',
  MEMORY_UNAVAILABLE: 'this process has no memory service',
  WEB_UNAVAILABLE: 'this process has no web client',
  SINK_ERROR: 'the test effect sink answered an error',
  // Raised by MCP tools (src/mcp).
  MCP_TOOL_ERROR: 'the MCP server answered the call with isError',
  MCP_PROTOCOL_ERROR: 'the MCP server answered with a protocol error or could not be reached',
  MCP_SERVER_EXITED: 'the MCP server process ended while the call was in flight',
  // Raised by WebAssembly tools (src/wasm).
  WASM_TRAP: 'the module trapped (unreachable, out-of-bounds access, stack overflow …)',
  WASM_EXIT_NONZERO: 'the module exited with a non-zero code (stderr is in the message)',
  WASM_BAD_OUTPUT: 'the module wrote no valid JSON on stdout',
  WASM_OUTPUT_TOO_LARGE: "the module wrote more than the tool's max_output_bytes",
  WASM_MEMORY_LIMIT: "the module hit the tool's memory_limit_mb",
  WASM_TIMEOUT: "the module ran past the tool's timeout_ms; its worker was replaced",
  WASM_CRASHED: 'the sandbox worker died during the call',
} as const;
export type ToolResultCode = keyof typeof TOOL_RESULT_CODES;

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
