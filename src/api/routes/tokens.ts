// Tenant tokens (admin only). The secret is returned once at creation and stored only
// as its sha256; listing never shows it.

import { z } from 'zod';
import { KeelError } from '../../errors.ts';
import { mintTenantToken } from '../auth.ts';
import type { ApiDepsWith, ZodApp } from '../deps.ts';
import { deletedSchema, nameSchema, tenantParams } from '../schemas.ts';
import type { TenantStore } from '../../store/store.ts';

type Deps = ApiDepsWith<TenantStore>;

const tokenParams = z.strictObject({
  tenant: nameSchema,
  id: z.string().min(1).max(64),
});

export function tokenRoutes(app: ZodApp, deps: Deps): void {
  const { store } = deps;
  const tags = ['tokens'];

  app.get(
    '/v1/tenants/:tenant/tokens',
    { config: { auth: 'admin' }, schema: { tags, params: tenantParams } },
    async (request) => {
      const tokens = await store.listTokens(request.params.tenant);
      // Only public fields, whatever the store returns.
      return {
        tokens: tokens.map(({ id, tenant, name, created_at }) => ({
          id,
          tenant,
          name,
          created_at,
        })),
      };
    },
  );

  app.post(
    '/v1/tenants/:tenant/tokens',
    {
      config: { auth: 'admin' },
      schema: { tags, params: tenantParams, body: z.strictObject({ name: nameSchema }) },
    },
    async (request, reply) => {
      const minted = mintTenantToken();
      const record = await store.createToken({
        id: minted.id,
        tenant: request.params.tenant,
        name: request.body.name,
        created_at: new Date().toISOString(),
        hash: minted.hash,
      });
      return reply.code(201).send({
        id: record.id,
        name: record.name,
        token: minted.token,
        created_at: record.created_at,
      });
    },
  );

  app.delete(
    '/v1/tenants/:tenant/tokens/:id',
    {
      config: { auth: 'admin' },
      schema: { tags, params: tokenParams, response: { 200: deletedSchema } },
    },
    async (request) => {
      const deleted = await store.deleteToken(request.params.tenant, request.params.id);
      if (!deleted) throw new KeelError('TOKEN_NOT_FOUND', `token ${request.params.id} not found`);
      return { deleted: true as const };
    },
  );
}
