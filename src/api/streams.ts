// Long-lived requests: SSE streams (`T/runs/:id/events`) and long-poll waits
// (`T/runs/:id/wait`). They outlive http.request_timeout_ms and http.idle_timeout_ms on
// purpose (a stream may be quiet between heartbeats; a wait is quiet until the run
// ends), so instead of the timeouts they get a per-tenant cap: one tenant cannot hold
// every socket the server may open. A route opts in with `config.long_lived`.

import type { FastifyInstance, FastifyReply } from 'fastify';
import { KeelError } from '../errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** SSE or long-poll: exempt from the idle timeout, counted per tenant. */
    long_lived?: boolean;
  }
}

/** Open long-lived requests per tenant, in this process. */
export class TenantStreams {
  private readonly open = new Map<string, number>();

  constructor(private readonly maxPerTenant: number) {}

  count(tenant: string): number {
    return this.open.get(tenant) ?? 0;
  }

  /** Counts one more for `tenant`, or throws 429 RATE_LIMITED at the cap. */
  acquire(tenant: string): () => void {
    const current = this.count(tenant);
    if (current >= this.maxPerTenant) {
      throw new KeelError(
        'RATE_LIMITED',
        `tenant ${tenant} already has ${current} open event streams and waits (http.max_streams_per_tenant); close one first`,
        { retry_after_s: 1 },
      );
    }
    this.open.set(tenant, current + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.count(tenant) - 1;
      if (left > 0) this.open.set(tenant, left);
      else this.open.delete(tenant);
    };
  }
}

export function installStreamLimits(app: FastifyInstance, streams: TenantStreams): void {
  // preHandler: after auth and validation, so only real, permitted requests count.
  app.addHook('preHandler', async (request, reply) => {
    if (request.routeOptions.config.long_lived !== true) return;
    const tenant = (request.params as { tenant?: string }).tenant ?? '';
    const release = streams.acquire(tenant);
    const socket = request.raw.socket;
    const idleTimeout = socket.timeout ?? 0;
    // No idle timeout while it lasts: a quiet stream or wait is not a stalled client.
    socket.setTimeout(0);
    // 'close' fires once the response is done or the client went away, hijacked or not.
    reply.raw.once('close', () => {
      release();
      // A keep-alive socket goes on to carry ordinary requests.
      if (!socket.destroyed) socket.setTimeout(idleTimeout);
    });
  });
}

/** Aborts when the client goes away before the response is written. */
export function abortOnDisconnect(reply: FastifyReply): AbortController {
  const controller = new AbortController();
  const onClose = (): void => {
    if (!reply.raw.writableFinished) controller.abort();
  };
  reply.raw.once('close', onClose);
  // A client that left while the route was still reading (before this was called): its
  // 'close' has fired already, and a wait given this signal would last until the run ends.
  if (reply.raw.destroyed) onClose();
  return controller;
}
