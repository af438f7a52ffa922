// Approvals (docs/approvals.md): the tenant's pending approvals, a run's approvals, and
// the one decision per call (`POST T/runs/:id/approvals/:call_id`, one transaction).

import { z } from 'zod';
import { KeelError } from '../../errors.ts';
import type { ApiDepsWith, ZodApp } from '../deps.ts';
import { nameSchema, queryInt, tenantParams } from '../schemas.ts';
import type { ApprovalStore } from '../../store/store.ts';

type Deps = ApiDepsWith<ApprovalStore>;

const runId = z.string().min(1).max(64).describe('run id (UUIDv7)');
const runParams = z.strictObject({ tenant: nameSchema, id: runId });
const decisionParams = z.strictObject({
  tenant: nameSchema,
  id: runId,
  call_id: z.string().min(1).max(200).describe('the tool call id, as on the approval'),
});
const listQuery = z.strictObject({ limit: queryInt(1, 500, 100) });
const decisionBody = z.strictObject({
  decision: z.enum(['approve', 'deny']),
  note: z
    .string()
    .max(4000)
    .optional()
    .describe('why; a denial gives it to the model as the error message'),
});

export function approvalRoutes(app: ZodApp, deps: Deps): void {
  const { store } = deps;
  const tags = ['approvals'];

  app.get(
    '/v1/tenants/:tenant/approvals',
    { config: { auth: 'tenant' }, schema: { tags, params: tenantParams, querystring: listQuery } },
    async (request) => ({
      approvals: await store.listPendingApprovals(request.params.tenant, request.query.limit),
    }),
  );

  app.get(
    '/v1/tenants/:tenant/runs/:id/approvals',
    { config: { auth: 'tenant' }, schema: { tags, params: runParams } },
    async (request) => {
      const approvals = await store.listRunApprovals(request.params.tenant, request.params.id);
      if (!approvals) throw new KeelError('RUN_NOT_FOUND', `run ${request.params.id} not found`);
      return { approvals };
    },
  );

  app.post(
    '/v1/tenants/:tenant/runs/:id/approvals/:call_id',
    { config: { auth: 'tenant' }, schema: { tags, params: decisionParams, body: decisionBody } },
    async (request) => {
      const { tenant, id, call_id } = request.params;
      const { decision, note } = request.body;
      const approval = await store.decideApproval(tenant, id, call_id, {
        decision,
        note: note ?? null,
      });
      return { approval };
    },
  );
}
