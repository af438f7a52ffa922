// The error answers of a route in /openapi.json: one response per HTTP status, whose
// `code` enum lists the catalogue codes (src/errors.ts) the route can answer with. The
// codes follow from what the route is (its auth, whether it takes input, the resources
// named in its path) plus the route-specific ones listed here.

import type { ErrorCode } from '../../errors.ts';
import { ERROR_CATALOGUE } from '../../errors.ts';

const T = '/v1/tenants/:tenant';

/** Codes only some routes answer, keyed `METHOD url`. */
const ROUTE_ERRORS: Record<string, readonly ErrorCode[]> = {
  'POST /v1/tenants': ['QUOTA_EXCEEDED'],
  [`PATCH ${T}`]: ['CONFLICT'],
  [`POST ${T}/turns`]: [
    'SCOPE_BUSY',
    'IDEMPOTENCY_KEY_REUSED',
    'QUOTA_EXCEEDED',
    'AGENT_NOT_FOUND',
  ],
  [`PUT ${T}/agents/:agent`]: ['INVALID_TOML', 'QUOTA_EXCEEDED'],
  [`POST ${T}/runs/:id/fork`]: ['QUOTA_EXCEEDED', 'SCOPE_BUSY'],
  [`POST ${T}/runs/:id/approvals/:call_id`]: ['APPROVAL_DECIDED'],
  [`POST ${T}/deliveries/:id/ack`]: [
    'CLAIM_EXPIRED',
    'CLAIM_TOKEN_MISMATCH',
    'DELIVERY_NOT_CLAIMED',
  ],
  [`POST ${T}/deliveries/:id/retry`]: ['DELIVERY_NOT_DEAD'],
  [`PUT ${T}/artifacts/*`]: ['QUOTA_EXCEEDED', 'CONFLICT'],
  [`PUT ${T}/schedules/:name`]: ['AGENT_NOT_FOUND', 'QUOTA_EXCEEDED'],
  [`POST ${T}/schedules/:name/trigger`]: ['SCOPE_BUSY', 'QUOTA_EXCEEDED'],
  [`PUT ${T}/mcp/:name`]: ['MCP_SERVER_FAILED'],
  [`PUT ${T}/wasm-tools/:name`]: ['WASM_MODULE_INVALID', 'QUOTA_EXCEEDED'],
  [`GET ${T}/memory/:namespace/search`]: ['EMBEDDER_UNAVAILABLE', 'EMBEDDER_MISMATCH'],
  [`PUT ${T}/memory/:namespace/:id`]: ['EMBEDDER_UNAVAILABLE', 'EMBEDDER_MISMATCH'],
  [`POST ${T}/openai/chat/completions`]: ['AGENT_NOT_FOUND', 'SCOPE_BUSY', 'QUOTA_EXCEEDED'],
};

/** A path segment followed by a parameter names a resource that may not exist. */
const NOT_FOUND: Record<string, ErrorCode> = {
  tenants: 'TENANT_NOT_FOUND',
  tokens: 'TOKEN_NOT_FOUND',
  agents: 'AGENT_NOT_FOUND',
  runs: 'RUN_NOT_FOUND',
  approvals: 'APPROVAL_NOT_FOUND',
  threads: 'THREAD_NOT_FOUND',
  deliveries: 'DELIVERY_NOT_FOUND',
  artifacts: 'ARTIFACT_NOT_FOUND',
  schedules: 'SCHEDULE_NOT_FOUND',
  memory: 'MEMORY_NOT_FOUND',
  mcp: 'MCP_SERVER_NOT_FOUND',
  secrets: 'SECRET_NOT_FOUND',
  webhooks: 'WEBHOOK_NOT_FOUND',
  'wasm-tools': 'WASM_TOOL_NOT_FOUND',
};

export interface RouteFacts {
  key: string;
  method: string;
  url: string;
  auth: string | undefined;
  hasBody: boolean;
  hasInput: boolean;
}

/** The catalogue codes a route can answer with, sorted. */
export function routeErrorCodes(route: RouteFacts): ErrorCode[] {
  const codes = new Set<ErrorCode>(['INTERNAL', 'OVERLOADED', 'STORE_UNAVAILABLE']);
  if (route.url.includes(':')) codes.add('VALIDATION_FAILED');
  if (route.hasInput) codes.add('VALIDATION_FAILED');
  if (route.hasBody) {
    for (const code of ['INVALID_JSON', 'UNKNOWN_FIELD', 'PAYLOAD_TOO_LARGE'] as const) {
      codes.add(code);
    }
    codes.add('REQUEST_TIMEOUT');
  }
  // The cross-site guard: a POST, PUT or PATCH names application/json, body or not.
  if (route.hasBody || ['POST', 'PUT', 'PATCH'].includes(route.method)) {
    codes.add('UNSUPPORTED_MEDIA_TYPE');
  }
  if (route.auth !== 'open') {
    for (const code of ['UNAUTHENTICATED', 'FORBIDDEN', 'HOST_NOT_ALLOWED'] as const) {
      codes.add(code);
    }
    codes.add('CROSS_SITE_REQUEST');
  }
  if (route.url.startsWith('/v1/tenants/:tenant')) codes.add('RATE_LIMITED');
  const segments = route.url.split('/');
  segments.forEach((segment, index) => {
    const next = segments[index + 1];
    const code = NOT_FOUND[segment];
    if (code && next !== undefined && (next.startsWith(':') || next === '*')) codes.add(code);
  });
  if (route.url.startsWith('/v1/tenants/:tenant/threads/:agent/')) codes.add('THREAD_NOT_FOUND');
  for (const code of ROUTE_ERRORS[route.key] ?? []) codes.add(code);
  return [...codes].sort();
}

/** One swagger response per status: the error shape with the codes of that status. */
export function errorResponses(route: RouteFacts): Record<string, Record<string, unknown>> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of routeErrorCodes(route)) {
    const status = ERROR_CATALOGUE[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, Record<string, unknown>> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: codes.map((code) => `${code}: ${ERROR_CATALOGUE[code].message}`).join('; '),
      type: 'object',
      required: ['error'],
      properties: {
        error: {
          type: 'object',
          required: ['code', 'message', 'request_id'],
          properties: {
            code: { type: 'string', enum: codes },
            message: { type: 'string' },
            request_id: { type: 'string' },
          },
        },
      },
    };
  }
  return responses;
}
