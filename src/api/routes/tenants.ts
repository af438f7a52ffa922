// Tenants (admin only, except that a tenant token may read its own tenant).

import { z } from 'zod';
import { KeelError } from '../../errors.ts';
import type { ApiDepsWith, ZodApp } from '../deps.ts';
import { deletedSchema, nameSchema, tenantParams } from '../schemas.ts';
import { metadataSchema } from '../text-checks.ts';
import type { TenantStore, UsageStore } from '../../store/store.ts';
import { applyTenantLimits, tenantLimitsSchema } from './usage.ts';

type Deps = ApiDepsWith<TenantStore & Pick<UsageStore, 'getTenantBudget' | 'putTenantBudget'>>;

const createTenantBody = z.strictObject({
  name: nameSchema,
  metadata: metadataSchema.optional(),
});

const patchTenantBody = z
  .strictObject({
    metadata: metadataSchema.optional(),
    limits: tenantLimitsSchema.optional(),
    if_updated_at: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe('updated_at as last read; 409 CONFLICT when the tenant changed since'),
  })
  .superRefine((body, context) => {
    if (body.metadata === undefined && body.limits === undefined) {
      const message = 'Invalid input: expected object, received undefined (metadata or limits)';
      context.addIssue({ code: 'custom', path: ['metadata'], message });
    }
  });

export function tenantRoutes(app: ZodApp, deps: Deps): void {
  const { store } = deps;
  const tags = ['tenants'];

  app.get('/v1/tenants', { config: { auth: 'admin' }, schema: { tags } }, async () => ({
    tenants: await store.listTenants(),
  }));

  app.post(
    '/v1/tenants',
    { config: { auth: 'admin' }, schema: { tags, body: createTenantBody } },
    async (request, reply) => {
      const { tenant, created } = await store.createTenant(
        request.body.name,
        request.body.metadata ?? {},
      );
      return reply.code(created ? 201 : 200).send({ tenant });
    },
  );

  app.get(
    '/v1/tenants/:tenant',
    { config: { auth: 'tenant' }, schema: { tags, params: tenantParams } },
    async (request) => {
      const tenant = await store.getTenant(request.params.tenant);
      if (!tenant)
        throw new KeelError('TENANT_NOT_FOUND', `tenant ${request.params.tenant} not found`);
      return { tenant: { ...tenant, limits: await store.getTenantBudget(tenant.name) } };
    },
  );

  app.patch(
    '/v1/tenants/:tenant',
    { config: { auth: 'admin' }, schema: { tags, params: tenantParams, body: patchTenantBody } },
    async (request) => {
      const { tenant: name } = request.params;
      const { metadata, limits, if_updated_at: ifUpdatedAt } = request.body;
      // if_updated_at guards metadata; limits are set as given (omitted keeps, null removes).
      const tenant =
        metadata !== undefined
          ? await store.updateTenant(name, metadata, ifUpdatedAt)
          : await store.getTenant(name);
      if (!tenant) throw new KeelError('TENANT_NOT_FOUND', `tenant ${name} not found`);
      const budget = limits
        ? await applyTenantLimits(store, name, limits)
        : await store.getTenantBudget(name);
      return { tenant: { ...tenant, limits: budget } };
    },
  );

  app.delete(
    '/v1/tenants/:tenant',
    {
      config: { auth: 'admin' },
      schema: { tags, params: tenantParams, response: { 200: deletedSchema } },
    },
    async (request) => {
      const deleted = await store.deleteTenant(request.params.tenant);
      if (!deleted)
        throw new KeelError('TENANT_NOT_FOUND', `tenant ${request.params.tenant} not found`);
      return { deleted: true as const };
    },
  );
}
