// POST T/runs/:id/fork (docs/agent-loop.md, "Fork"): a new run that starts from a copy
// of the run's journal up to step n, in a new scope or the one given.

import { z } from 'zod';
import { forkRun } from '../../runtime/fork.ts';
import type { ApiDepsWith, ZodApp } from '../deps.ts';
import {
  jsonObjectSchema,
  nameSchema,
  requestIdSchema,
  runStatusSchema,
  scopeSchema,
} from '../schemas.ts';
import type { RunBranchStore } from '../../store/store.ts';

type Deps = ApiDepsWith<Pick<RunBranchStore, 'forkRun'>>;

const forkParams = z.strictObject({
  tenant: nameSchema,
  id: z.string().min(1).max(64).describe('the source run id (UUIDv7)'),
});

const forkBodySchema = z
  .strictObject({
    at_step: z
      .int()
      .min(0)
      .max(10_000)
      .describe('keep the user entry and the first at_step model steps with their tool results'),
    payload: jsonObjectSchema.optional().describe("replaces the run's user message"),
    scope: scopeSchema.optional().describe('default: a new scope fork:<new run id>'),
    request_id: requestIdSchema
      .optional()
      .describe('dedup as for turns: a replay answers the first fork (200, deduplicated)'),
  })
  .describe('a fork');

const forkResponseSchema = z.object({
  run_id: z.string(),
  scope: z.string(),
  status: runStatusSchema,
  forked_from: z.string(),
  at_step: z.int(),
  deduplicated: z.boolean(),
});

export function forkRoutes(app: ZodApp, deps: Deps): void {
  app.post(
    '/v1/tenants/:tenant/runs/:id/fork',
    {
      config: { auth: 'tenant' },
      schema: {
        tags: ['runs'],
        params: forkParams,
        body: forkBodySchema,
        response: { 200: forkResponseSchema, 202: forkResponseSchema },
      },
    },
    async (request, reply) => {
      const { tenant, id } = request.params;
      const { run, deduplicated } = await forkRun(deps.store, {
        tenant,
        source_run_id: id,
        at_step: request.body.at_step,
        payload: request.body.payload ?? null,
        scope: request.body.scope ?? null,
        request_id: request.body.request_id ?? null,
        max_queued: deps.config.tenant_limits.queued_runs,
      });
      return reply.code(deduplicated ? 200 : 202).send({
        run_id: run.run_id,
        scope: run.scope,
        status: run.status,
        forked_from: id,
        at_step: request.body.at_step,
        deduplicated,
      });
    },
  );
}
