// Deliveries: the pull outbox. Adapters claim a batch with a lease and ack each one
// with the claim token they were given.

import { z } from 'zod';
import type { ApiDepsWith, ZodApp } from '../deps.ts';
import {
  cursorSchema,
  deliveryStatusSchema,
  destinationSchema,
  nameSchema,
  queryInt,
  tenantParams,
} from '../schemas.ts';
import { listPager } from '../page-budget.ts';
import { abortOnDisconnect } from '../streams.ts';
import { claimDeliveriesWaiting } from '../../runtime/delivery-wait.ts';
import type { DeliveryStore, StoreChanges } from '../../store/store.ts';

type Deps = ApiDepsWith<DeliveryStore & StoreChanges>;

const listQuery = z.strictObject({
  status: deliveryStatusSchema.optional(),
  destination_prefix: destinationSchema.optional(),
  run_id: z.string().min(1).max(64).optional(),
  limit: queryInt(1, 200, 50),
  cursor: cursorSchema.optional(),
});

const claimBody = z
  .strictObject({
    limit: z.int().min(1).max(100).default(10),
    destination_prefix: destinationSchema.optional(),
    lease_ms: z.int().min(1000).max(600_000).default(60_000),
    wait_ms: z
      .int()
      .min(0)
      .max(120_000)
      .default(0)
      .describe('long poll: when nothing is due, wait up to this long for a delivery'),
  })
  // fastify hands a request without a body over as null
  .nullish()
  .describe('optional; an empty body claims up to 10 with a 60 s lease');

const ackParams = z.strictObject({ tenant: nameSchema, id: z.string().min(1).max(64) });
const ackBody = z.strictObject({
  claim_token: z.string().min(1).max(256),
  outcome: z.enum(['delivered', 'retry', 'failed']),
  // null is accepted as "absent" (agentd's adapter sends `"error": null`).
  error: z.string().max(4000).nullish(),
  retry_after_ms: z.int().min(0).max(86_400_000).nullish(),
});

export function deliveryRoutes(app: ZodApp, deps: Deps): void {
  const { store, config } = deps;
  const listPage = listPager(config.tenant_limits.list_page_bytes);
  const tags = ['deliveries'];

  app.get(
    '/v1/tenants/:tenant/deliveries',
    { config: { auth: 'tenant' }, schema: { tags, params: tenantParams, querystring: listQuery } },
    async (request) => {
      const { limit, cursor, ...filter } = request.query;
      const page = await listPage({ limit, cursor }, (size, after) =>
        store.listDeliveries(request.params.tenant, filter, size, after),
      );
      return { deliveries: page.items, next_cursor: page.next_cursor };
    },
  );

  app.post(
    '/v1/tenants/:tenant/deliveries/claim',
    {
      config: { auth: 'tenant', long_lived: true },
      schema: { tags, params: tenantParams, body: claimBody },
    },
    async (request, reply) => {
      const body = request.body ?? { limit: 10, lease_ms: 60_000, wait_ms: 0 };
      const disconnect = abortOnDisconnect(reply);
      const input = {
        limit: body.limit,
        lease_ms: body.lease_ms,
        destination_prefix: body.destination_prefix,
        max_attempts: config.delivery.max_attempts,
      };
      const { tenant } = request.params;
      const deliveries = await claimDeliveriesWaiting(
        store,
        tenant,
        input,
        body.wait_ms,
        disconnect.signal,
      );
      return { deliveries };
    },
  );

  app.post(
    '/v1/tenants/:tenant/deliveries/:id/ack',
    { config: { auth: 'tenant' }, schema: { tags, params: ackParams, body: ackBody } },
    async (request) => {
      const { error, retry_after_ms, ...ack } = request.body;
      const delivery = await store.ackDelivery(request.params.tenant, request.params.id, {
        ...ack,
        ...(error != null && { error }),
        ...(retry_after_ms != null && { retry_after_ms }),
        max_attempts: config.delivery.max_attempts,
      });
      return { delivery };
    },
  );

  app.post(
    '/v1/tenants/:tenant/deliveries/:id/retry',
    {
      config: { auth: 'tenant' },
      schema: { tags, params: ackParams, body: z.strictObject({}).nullish() },
    },
    async (request) => ({
      delivery: await store.retryDeadDelivery(request.params.tenant, request.params.id),
    }),
  );
}
