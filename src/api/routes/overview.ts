// What the console asks before anything else: who the token is (GET /v1/whoami) and the
// figures of the overview (GET T/overview for one tenant, GET /v1/overview for all) —
// the same numbers `/metrics` exports, as JSON a tenant token may read for its tenant.

import type { ApiDepsWith, ZodApp } from '../deps.ts';
import { tenantParams } from '../schemas.ts';
import type { StoreLifecycle } from '../../store/store.ts';

type Deps = ApiDepsWith<Pick<StoreLifecycle, 'stats'>>;

async function overviewOf(deps: Deps, tenant: string | undefined) {
  const stats = await deps.store.stats(tenant);
  const now = Date.now();
  return {
    tenant: tenant ?? null,
    runs_by_status: stats.runs_by_status,
    queue_depth: stats.runs_by_status.queued ?? 0,
    oldest_queued_age_ms:
      stats.oldest_queued_ms === null ? null : Math.max(0, now - stats.oldest_queued_ms),
    deliveries_by_status: stats.deliveries_by_status,
    deliveries_dead: stats.deliveries_by_status.dead ?? 0,
    schedules_failing: stats.schedules_failing,
  };
}

export function overviewRoutes(app: ZodApp, deps: Deps): void {
  const tags = ['operations'];

  app.get('/v1/whoami', { config: { auth: 'tenant' }, schema: { tags } }, async (request) => {
    const principal = request.principal;
    return principal.kind === 'tenant'
      ? { kind: 'tenant' as const, tenant: principal.tenant }
      : { kind: 'admin' as const, tenant: null };
  });

  app.get('/v1/overview', { config: { auth: 'admin' }, schema: { tags } }, async () =>
    overviewOf(deps, undefined),
  );

  app.get(
    '/v1/tenants/:tenant/overview',
    { config: { auth: 'tenant' }, schema: { tags, params: tenantParams } },
    async (request) => overviewOf(deps, request.params.tenant),
  );
}
