// Builds the HTTP edge: fastify with zod validation, the error shape, auth, request ids,
// metrics and every /v1 route. Returns the instance without listening; main.ts listens
// (after assertListenAllowed) and closes it.

import swagger from '@fastify/swagger';
import Fastify, { LogController } from 'fastify';
import type { FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { KeelError } from '../errors.ts';
import { consoleRoutes, loadConsoleAssets } from '../console/plugin.ts';
import { installAuth } from './auth.ts';
import {
  createOpenApiTransform,
  createOpenApiTransformObject,
  openApiBase,
} from './openapi/document.ts';
import { installCrossSiteGuard } from './cross-site.ts';
import { installBodyParsers } from './body-parsers.ts';
import { installTenantRateLimit, TenantRateLimiter } from './rate-limit.ts';
import type { ApiDeps, ZodApp } from './deps.ts';
import { frameworkErrorHandler, installErrorHandling } from './error-handler.ts';
import { capConnections, httpServerOptions } from './http-limits.ts';
import { requestIdFor } from './request-id.ts';
import { TenantStreams, installStreamLimits } from './streams.ts';
import { createKnownNames } from '../tools/known-names.ts';
import { createToolRegistry } from '../tools/registry.ts';
import { agentRoutes } from './routes/agents.ts';
import { artifactRoutes } from './routes/artifacts.ts';
import { changeRoutes } from './routes/changes.ts';
import { deliveryRoutes } from './routes/deliveries.ts';
import { eventRoutes } from './routes/events.ts';
import { memoryRoutes } from './routes/memory.ts';
import { openaiRoutes } from './routes/openai.ts';
import { operationRoutes } from './routes/operations.ts';
import { overviewRoutes } from './routes/overview.ts';
import { presetRoutes } from './routes/presets.ts';
import { runRoutes } from './routes/runs.ts';
import { forkRoutes } from './routes/fork.ts';
import { approvalRoutes } from './routes/approvals.ts';
import { scheduleRoutes } from './routes/schedules.ts';
import { usageRoutes } from './routes/usage.ts';
import { tenantRoutes } from './routes/tenants.ts';
import { threadRoutes } from './routes/threads.ts';
import { tokenRoutes } from './routes/tokens.ts';
import { mcpRoutes, secretRoutes } from './routes/mcp.ts';
import { wasmToolRoutes } from './routes/wasm-tools.ts';
import { toolRoutes } from './routes/tools.ts';
import { turnRoutes } from './routes/turns.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { installNulGuard } from './text-checks.ts';

export type { ApiDeps } from './deps.ts';
export { assertListenAllowed } from './auth.ts';

// Bodies other than turns (agents, tenants, acks) are small; 1 MiB is plenty. The turn
// route sets its own limit from config.limits.turn_body_bytes.
const DEFAULT_BODY_LIMIT = 1_048_576;

export async function buildApi(deps: ApiDeps): Promise<FastifyInstance> {
  // The pinned pino Logger type is narrower than FastifyBaseLogger; fastify only needs
  // the base interface, so the instance is typed with it.
  const http = deps.config.http;
  const app = Fastify({
    loggerInstance: deps.logger,
    genReqId: requestIdFor,
    // One log line per request (the onResponse hook below), not fastify's two.
    logController: new LogController({
      requestIdLogLabel: 'request_id',
      disableRequestLogging: true,
    }),
    requestIdHeader: false,
    // A scope may be 256 bytes of UTF-8, up to 768 characters once percent-encoded.
    routerOptions: { maxParamLength: 1024 },
    bodyLimit: DEFAULT_BODY_LIMIT,
    // Errors fastify raises before routing (e.g. malformed percent-encoding).
    frameworkErrors: frameworkErrorHandler,
    // Requests arriving while closing get keel's error shape instead (hook below).
    return503OnClosing: false,
    forceCloseConnections: true,
    ...httpServerOptions(http),
  }) as unknown as FastifyInstance;
  capConnections(app, http);

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  // Every response, errors included, names its request.
  app.addHook('onSend', async (request, reply, payload) => {
    void reply.header('x-request-id', request.id);
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    const ms = Math.round(reply.elapsedTime * 10) / 10;
    request.log.info(
      { method: request.method, url: request.url, status: reply.statusCode, ms },
      `${request.method} ${request.url} ${reply.statusCode} ${ms} ms`,
    );
    deps.metrics.httpRequests.inc({
      method: request.method,
      // The route pattern, never the raw URL: label cardinality stays bounded.
      route: request.routeOptions.url ?? 'unmatched',
      status: String(reply.statusCode),
    });
  });

  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async () => {
    if (closing) throw new KeelError('OVERLOADED', 'the server is shutting down');
  });

  installErrorHandling(app);
  installBodyParsers(app);
  // Before auth: a NUL in the path must not reach a store lookup (PostgreSQL refuses it).
  installNulGuard(app);
  installAuth(app, deps.config, deps.store);
  // A cross-site request is refused before it can spend the tenant's request tokens.
  installCrossSiteGuard(app);
  installTenantRateLimit(
    app,
    new TenantRateLimiter({
      requestsPerS: deps.config.tenant_limits.requests_per_s,
      burst: deps.config.tenant_limits.request_burst,
    }),
  );
  installStreamLimits(app, new TenantStreams(http.max_streams_per_tenant));

  await app.register(swagger, {
    openapi: openApiBase(),
    transform: createOpenApiTransform(),
    transformObject: createOpenApiTransformObject(),
  });

  const zodApp: ZodApp = app.withTypeProvider<ZodTypeProvider>();
  operationRoutes(zodApp, deps);
  consoleRoutes(app, loadConsoleAssets());
  overviewRoutes(zodApp, deps);
  tenantRoutes(zodApp, deps);
  usageRoutes(zodApp, deps);
  tokenRoutes(zodApp, deps);
  // One view of the names an agent may use, for the agent and preset routes.
  const knownNamesFor = createKnownNames({
    tools: async (tenant) =>
      deps.toolsFor ? deps.toolsFor(tenant) : (deps.tools ?? createToolRegistry([])),
    mcpServers: deps.store,
    providers: deps.providers ?? Object.keys(deps.config.providers),
  });
  agentRoutes(zodApp, deps, knownNamesFor);
  turnRoutes(zodApp, deps);
  runRoutes(zodApp, deps);
  forkRoutes(zodApp, deps);
  approvalRoutes(zodApp, deps);
  eventRoutes(zodApp, deps);
  changeRoutes(zodApp, deps);
  threadRoutes(zodApp, deps);
  deliveryRoutes(zodApp, deps);
  toolRoutes(zodApp, deps);
  secretRoutes(zodApp, deps);
  if (deps.mcp) mcpRoutes(zodApp, deps, deps.mcp);
  if (deps.wasm) wasmToolRoutes(zodApp, deps, deps.wasm);
  artifactRoutes(zodApp, deps);
  scheduleRoutes(zodApp, deps);
  if (deps.memory) memoryRoutes(zodApp, deps.memory, deps.config.tenant_limits.list_page_bytes);
  presetRoutes(zodApp, deps, knownNamesFor);
  webhookRoutes(zodApp, deps);
  await openaiRoutes(zodApp, deps);

  return app;
}
