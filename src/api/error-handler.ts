// Every error response has one shape: {error: {code, message, request_id}}. KeelErrors
// keep their catalogue status and message; validation and body-parsing failures are
// mapped to their catalogue codes with the offending field named; anything else becomes
// a generic 500 whose real cause goes to the log only (docs/http-api.md, Errors).

import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import type { ErrorCode } from '../errors.ts';
import { KeelError, isKeelError } from '../errors.ts';
import { RouteMethods } from './route-methods.ts';

interface ErrorBody {
  error: { code: string; message: string; request_id: string };
}

/** fastify's own error codes that are the caller's fault, mapped to the catalogue. */
const FRAMEWORK_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'VALIDATION_FAILED',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
  FST_ERR_BAD_URL: 'VALIDATION_FAILED',
  FST_ERR_NOT_FOUND: 'ROUTE_NOT_FOUND',
};

const FRAMEWORK_MESSAGES: Partial<Record<string, string>> = {
  FST_ERR_BAD_URL: 'the path is not valid (malformed percent-encoding)',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'content-length does not match the body',
};

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  message?: string;
  params?: Record<string, unknown>;
}

function fieldPath(context: string, instancePath: string): string {
  const segments = instancePath.split('/').filter((segment) => segment.length > 0);
  return [context, ...segments].join('.');
}

/** Turns zod issues (as fastify-type-provider-zod reports them) into one KeelError. */
function validationToKeelError(issues: ValidationIssue[], context: string): KeelError {
  const unknown = issues.filter((issue) => issue.keyword === 'unrecognized_keys');
  if (unknown.length > 0) {
    const names = unknown.flatMap((issue) => {
      const keys = Array.isArray(issue.params?.keys) ? (issue.params.keys as unknown[]) : [];
      return keys.map((key) => `${fieldPath(context, issue.instancePath)}.${String(key)}`);
    });
    return new KeelError('UNKNOWN_FIELD', `unknown field ${names.join(', ')}`, { fields: names });
  }
  const described = issues
    .slice(0, 5)
    .map((issue) => `${fieldPath(context, issue.instancePath)}: ${issue.message ?? 'invalid'}`);
  return new KeelError('VALIDATION_FAILED', described.join('; '));
}

/** Unauthenticated, forbidden (cross-site too), too large, wrong media type. */
const CLOSES_CONNECTION = new Set([401, 403, 413, 415]);

function retryAfterSeconds(error: KeelError): number | null {
  if (error.status !== 429 && error.status !== 503) return null;
  const hinted = error.details?.retry_after_s;
  return typeof hinted === 'number' && hinted > 0 ? Math.ceil(hinted) : 1;
}

/** Normalizes anything thrown during a request into a KeelError that may be shown. */
function toPublicError(error: unknown, request: FastifyRequest): KeelError {
  if (isKeelError(error)) {
    // Run-failure and startup codes describe the server, not the request: keep them
    // out of responses.
    if (error.status >= 500 && error.status !== 503) {
      request.log.error({ err: error }, 'unexpected KeelError reached the HTTP edge');
      return new KeelError('INTERNAL');
    }
    return error;
  }
  const fastifyError = error as Partial<FastifyError> | null;
  if (hasZodFastifySchemaValidationErrors(error)) {
    const context = (error as FastifyError).validationContext ?? 'request';
    return validationToKeelError(fastifyError?.validation as ValidationIssue[], context);
  }
  const mapped = fastifyError?.code ? FRAMEWORK_CODES[fastifyError.code] : undefined;
  if (mapped) return new KeelError(mapped, FRAMEWORK_MESSAGES[fastifyError?.code ?? '']);
  request.log.error({ err: error }, 'request failed');
  return new KeelError('INTERNAL');
}

function sendError(reply: FastifyReply, request: FastifyRequest, error: KeelError): void {
  const retryAfter = retryAfterSeconds(error);
  if (retryAfter !== null) void reply.header('retry-after', String(retryAfter));
  if (error.code === 'UNAUTHENTICATED') void reply.header('www-authenticate', 'Bearer');
  // A refused caller, or one whose body is still unread, loses its socket after the
  // answer: Node would otherwise drain (wait for) the rest of the body, however slowly
  // it trickles in, to reuse the connection.
  if (CLOSES_CONNECTION.has(error.status) || !request.raw.complete) {
    void reply.header('connection', 'close');
  }
  // Set here too: replies to framework errors (bad URLs) skip the onSend hook.
  void reply.header('x-request-id', String(request.id));
  const body: ErrorBody = {
    error: { code: error.code, message: error.message, request_id: String(request.id) },
  };
  void reply.code(error.status).type('application/json; charset=utf-8').send(body);
}

/**
 * Call before any route is added: the 405 answer needs every route's methods.
 * `notFoundHint` is added to every 404 ROUTE_NOT_FOUND message (the worker's listener).
 */
export function installErrorHandling(app: FastifyInstance, notFoundHint?: string): void {
  const routeMethods = new RouteMethods();
  app.addHook('onRoute', (route) => routeMethods.record(route.method, route.url));
  app.setErrorHandler((error, request, reply) => {
    sendError(reply, request, toPublicError(error, request));
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = routeMethods.allowed(path);
    if (allowed.length > 0) {
      void reply.header('allow', allowed.join(', '));
      sendError(
        reply,
        request,
        new KeelError(
          'METHOD_NOT_ALLOWED',
          `${request.method} is not allowed on this path; allowed: ${allowed.join(', ')}`,
        ),
      );
      return;
    }
    sendError(
      reply,
      request,
      new KeelError(
        'ROUTE_NOT_FOUND',
        `no route ${request.method} ${path.slice(0, 200)}${notFoundHint ? `: ${notFoundHint}` : ''}`,
      ),
    );
  });
}

/** Used by fastify's `frameworkErrors` option (malformed URLs, before routing). */
export function frameworkErrorHandler(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  sendError(reply, request, toPublicError(error, request));
}
