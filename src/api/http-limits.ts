// The [http] timeouts and connection caps (docs/configuration.md), shared by every
// listener keel opens: the API server and the small /healthz + /metrics server of the
// worker and scheduler roles. Slow or stalled clients (docs/threat-model.md, slowloris)
// are bounded per socket in time, and each server in sockets, in all and per address:
// one address that renews its slow sockets as fast as they are cut cannot hold them all.

import type { Server, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import ipaddr from 'ipaddr.js';
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

/** Not fastify options: set on the Node server before it listens. */
export function capConnections(app: FastifyInstance, http: HttpSettings): void {
  app.server.maxConnections = http.max_connections;
  capConnectionsPerAddress(app.server, http.max_connections_per_address);
}

/**
 * Who a connection counts against: its IPv4 address (an IPv4-mapped IPv6 one too), or
 * the /64 of an IPv6 address — one host is handed a whole /64 and can pick any address in
 * it. null when the socket has no address left (it closed before it was counted).
 */
export function connectionOwner(remoteAddress: string | undefined): string | null {
  if (remoteAddress === undefined || !ipaddr.isValid(remoteAddress)) return null;
  const address = ipaddr.process(remoteAddress);
  if (address.kind() === 'ipv4') return address.toString();
  const parts = (address as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((part) => part.toString(16)).join(':')}::/64`;
}

/**
 * Closes a new socket at once when its address already holds `limit` open ones. The
 * count lives on this server (no module state) and drops as each socket closes.
 */
function capConnectionsPerAddress(server: Server, limit: number): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const owner = connectionOwner(socket.remoteAddress);
    if (owner === null) return;
    const held = open.get(owner) ?? 0;
    if (held >= limit) {
      socket.destroy();
      return;
    }
    open.set(owner, held + 1);
    socket.once('close', () => {
      const left = (open.get(owner) ?? 1) - 1;
      if (left === 0) open.delete(owner);
      else open.set(owner, left);
    });
  });
}
