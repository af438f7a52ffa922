// The listener of a worker or scheduler process (keel serve --role worker|scheduler):
// only /healthz (the store answers) and /metrics (this process's registry) — no API
// routes, so a worker host exposes nothing a client could submit work through. It keeps
// the API server's [http] timeouts and connection cap: slow clients cannot hold it either.

import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import type { HttpSettings } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import type { StoreLifecycle } from '../store/store.ts';
import { installErrorHandling } from './error-handler.ts';
import { capConnections, httpServerOptions } from './http-limits.ts';
import { requestIdFor } from './request-id.ts';

export function buildRoleHealthServer(deps: {
  role: string;
  store: StoreLifecycle;
  metrics: Metrics;
  http: HttpSettings;
}): FastifyInstance {
  const app = Fastify({
    logger: false,
    forceCloseConnections: true,
    genReqId: requestIdFor,
    ...httpServerOptions(deps.http),
  }) as unknown as FastifyInstance;
  capConnections(app, deps.http);
  // Errors and unknown paths answer in keel's error shape, like the API's; the 404 says
  // what this listener is, since a client that reached it meant the API process.
  installErrorHandling(
    app,
    `a ${deps.role} process serves only /healthz and /metrics; the HTTP API is served by --role api (or all)`,
  );
  app.get('/healthz', async (_request, reply) => {
    try {
      await deps.store.ping();
      return { ok: true, role: deps.role };
    } catch (error) {
      // A worker without its database claims nothing until the connection is back.
      return reply.code(503).send({ ok: false, role: deps.role, error: (error as Error).message });
    }
  });
  app.get('/metrics', async (_request, reply) => {
    reply.header('content-type', deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
  return app;
}
