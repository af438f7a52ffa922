// The [http] timeouts and connection cap (docs/configuration.md), shared by every
// listener keel opens: the API server and the small /healthz + /metrics server of the
// worker and scheduler roles. Slow or stalled clients (docs/threat-model.md, slowloris)
// are bounded per socket in time, and each server in sockets.

import type { ServerOptions } from 'node:http';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { HttpSettings } from '../config.ts';
import { clientErrorHandler } from './client-errors.ts';

/** The fastify options that carry the [http] settings (spread into Fastify({...})). */
export function httpServerOptions(
  http: HttpSettings,
): Pick<
  FastifyServerOptions,
  | 'clientErrorHandler'
  | 'requestTimeout'
  | 'connectionTimeout'
  | 'keepAliveTimeout'
  | 'maxRequestsPerSocket'
> & { http: ServerOptions } {
  return {
    // Header and request deadlines still answer in keel's error shape (408).
    clientErrorHandler,
    requestTimeout: http.request_timeout_ms,
    http: {
      headersTimeout: http.headers_timeout_ms,
      // Node checks the header and request deadlines on this interval (default 30 s,
      // which would let a 10 s deadline slip to 40 s): a quarter of the shorter one.
      connectionsCheckingInterval: Math.max(250, Math.floor(http.headers_timeout_ms / 4)),
    },
    connectionTimeout: http.idle_timeout_ms,
    keepAliveTimeout: http.keep_alive_timeout_ms,
    maxRequestsPerSocket: http.max_requests_per_socket,
  };
}

/** Not a fastify option: set on the Node server before it listens. */
export function capConnections(app: FastifyInstance, http: HttpSettings): void {
  app.server.maxConnections = http.max_connections;
}
