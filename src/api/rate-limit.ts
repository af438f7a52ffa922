// Request rate per tenant: a token bucket per tenant (refilled at `requests_per_s`, up
// to `request_burst`), checked on every route under /v1/tenants/:tenant after auth, so
// an unauthenticated caller cannot spend a tenant's tokens. Over the rate → 429
// RATE_LIMITED with Retry-After (whole seconds until one token is back). The buckets
// live in the process: with N API processes a tenant gets up to N times the rate.

import type { FastifyInstance } from 'fastify';
import { KeelError } from '../errors.ts';

interface RateLimitOptions {
  requestsPerS: number;
  burst: number;
  /** Epoch ms; injected by tests. */
  now?: () => number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** Above this many buckets, full ones (idle tenants) are dropped: the map stays bounded. */
const SWEEP_ABOVE = 10_000;

export class TenantRateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly now: () => number;

  constructor(private readonly options: RateLimitOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Takes one token; returns null when allowed, else the seconds until one is back. */
  take(tenant: string): number | null {
    const now = this.now();
    const bucket = this.refilled(this.buckets.get(tenant), now);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      this.buckets.set(tenant, bucket);
      if (this.buckets.size > SWEEP_ABOVE) this.sweep(now);
      return null;
    }
    this.buckets.set(tenant, bucket);
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.options.requestsPerS));
  }

  private refilled(bucket: Bucket | undefined, now: number): Bucket {
    if (!bucket) return { tokens: this.options.burst, updatedAt: now };
    const elapsedS = Math.max(0, now - bucket.updatedAt) / 1000;
    return {
      tokens: Math.min(this.options.burst, bucket.tokens + elapsedS * this.options.requestsPerS),
      updatedAt: now,
    };
  }

  private sweep(now: number): void {
    for (const [tenant, bucket] of this.buckets) {
      if (this.refilled(bucket, now).tokens >= this.options.burst) this.buckets.delete(tenant);
    }
  }
}

/** Registers the check; call after installAuth (hooks run in registration order). */
export function installTenantRateLimit(app: FastifyInstance, limiter: TenantRateLimiter): void {
  app.addHook('onRequest', async (request) => {
    const tenant = (request.params as Record<string, string | undefined> | undefined)?.tenant;
    if (tenant === undefined || request.is404) return;
    const retryAfterS = limiter.take(tenant);
    if (retryAfterS !== null) {
      throw new KeelError(
        'RATE_LIMITED',
        `tenant ${tenant} is over its request rate (tenant_limits.requests_per_s); retry later`,
        { retry_after_s: retryAfterS },
      );
    }
  });
}
