// What the console asks before anything else: who the token is (GET /v1/whoami) and the
// figures of the overview (GET T/overview for one tenant, GET /v1/overview for all) —
// the same numbers `/metrics` exports, as JSON a tenant token may read for its tenant.

import type { ApiDepsWith, ZodApp } from '../deps.ts';
import { overviewFigures } from '../overview-figures.ts';
import { tenantParams } from '../schemas.ts';
import type { StoreLifecycle } from '../../store/store.ts';

type Deps = ApiDepsWith<Pick<StoreLifecycle, 'stats'>>;

async function overviewOf(deps: Deps, tenant: string | undefined) {
  const stats = await deps.store.stats(tenant);
  return { tenant: tenant ?? null, ...overviewFigures(stats, Date.now()) };
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
