// POST T/turns: one turn becomes one queued run (idempotent per tenant by request_id).

import { z } from 'zod';
import { enqueueTurn } from '../../runtime/enqueue.ts';
import type { ApiDepsWith, ZodApp } from '../deps.ts';
import {
  destinationSchema,
  jsonObjectSchema,
  nameSchema,
  requestIdSchema,
  runStatusSchema,
  scopeSchema,
  tenantParams,
} from '../schemas.ts';
import type { RunStore, StoreChanges } from '../../store/store.ts';

type Deps = ApiDepsWith<RunStore & StoreChanges>;

/** How long a turn submitted with `follow` counts as watched before its client arrives. */
const FOLLOW_GRACE_MS = 30_000;

const turnBodySchema = z
  .strictObject({
    agent: nameSchema,
    scope: scopeSchema,
    payload: jsonObjectSchema.describe('any JSON object, conventionally {text}'),
    request_id: requestIdSchema.optional(),
    delivery: z
      .strictObject({ destination: destinationSchema })
      .optional()
      .describe('ask for a delivery row in the outbox when the run succeeds'),
    on_busy: z
      .enum(['enqueue', 'reject', 'steer', 'interrupt'])
      .default('enqueue')
      .describe(
        'reject → 409 SCOPE_BUSY when the scope has a queued or running run; steer → into the running run at its next step boundary; interrupt → cancel the running run, this turn runs next',
      ),
    follow: z
      .boolean()
      .optional()
      .describe(
        'the caller opens the run\'s event stream next: until it does (at most 30 s) the run counts as watched, so a provider with stream = "when-watched" streams from its first model call',
      ),
  })
  .describe('a turn');

const turnResponseSchema = z.object({
  run_id: z.string(),
  status: runStatusSchema,
  deduplicated: z.boolean(),
  steered: z.boolean().optional(),
  steer_id: z.string().optional(),
});

export function turnRoutes(app: ZodApp, deps: Deps): void {
  app.post(
    '/v1/tenants/:tenant/turns',
    {
      config: { auth: 'tenant' },
      bodyLimit: deps.config.limits.turn_body_bytes,
      schema: {
        tags: ['turns'],
        params: tenantParams,
        body: turnBodySchema,
        response: { 200: turnResponseSchema, 202: turnResponseSchema },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const { run, deduplicated, steer_id } = await enqueueTurn(deps.store, {
        tenant: request.params.tenant,
        agent: body.agent,
        scope: body.scope,
        payload: body.payload,
        request_id: body.request_id ?? null,
        delivery: body.delivery ?? null,
        on_busy: body.on_busy,
        source: 'api',
        max_queued: deps.config.tenant_limits.queued_runs,
      });
      // Before the worker can claim the run (it claims on a later turn of the event loop).
      if (body.follow) deps.live?.expect(run.run_id, FOLLOW_GRACE_MS);
      return reply.code(deduplicated ? 200 : 202).send({
        run_id: run.run_id,
        status: run.status,
        deduplicated,
        ...(body.on_busy === 'steer' && { steered: steer_id !== undefined }),
        ...(steer_id !== undefined && { steer_id }),
      });
    },
  );
}
