// The documented success answers of the routes that do not declare `schema.response`
// themselves, keyed `METHOD url` as fastify registers the route. A route that declares
// its response keeps it (fastify also serializes with it); these only feed /openapi.json.
// A new route without either is listed by test/openapi-document.test.ts.

import type { ZodType } from 'zod';
import { z } from 'zod';

import {
  agentSchema,
  approvalSchema,
  artifactStatSchema,
  claimedDeliverySchema,
  deliverySchema,
  mcpServerSchema,
  memoryFactSchema,
  nextCursor,
  overviewSchema,
  pendingApprovalSchema,
  runAcceptedSchema,
  runSchema,
  scheduleSchema,
  tenantSchema,
  threadSchema,
  threadSummarySchema,
  toolDescriptionSchema,
  tenantUsageSchema,
  traceEventSchema,
  wasmToolSchema,
  webhookSchema,
} from './resources.ts';

/** A response that is not JSON: its media types, each with a plain JSON schema. */
export interface RawResponse {
  raw: true;
  description: string;
  content: Record<string, { schema: Record<string, unknown> }>;
}

export type DocumentedResponse = ZodType | RawResponse;

const sse = (description: string): RawResponse => ({
  raw: true,
  description,
  content: { 'text/event-stream': { schema: { type: 'string' } } },
});

const T = '/v1/tenants/:tenant';
const list = (key: string, item: ZodType) => z.looseObject({ [key]: z.array(item) });
const page = (key: string, item: ZodType) =>
  z.looseObject({ [key]: z.array(item), next_cursor: nextCursor });
const one = (key: string, item: ZodType) => z.looseObject({ [key]: item });
/** Created (201) or replaced (200): the same body. */
const upsert = (schema: ZodType) => ({ 200: schema, 201: schema });

const tokenSchema = z.looseObject({
  id: z.string(),
  tenant: z.string(),
  name: z.string(),
  created_at: z.string(),
});
const secretInfoSchema = z.looseObject({
  name: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
const entrySchema = z.looseObject({
  run_id: z.string(),
  seq: z.number().int(),
  attempt: z.number().int(),
  ts: z.string(),
  kind: z.enum(['user', 'assistant', 'tool_result', 'note']),
});
const scheduleFired = runAcceptedSchema.extend({ schedule: scheduleSchema.nullable() });
const webhookWithSecret = z.looseObject({
  webhook: webhookSchema,
  secret: z.string().describe('shown once: the signing secret'),
});
const chatCompletion = z.looseObject({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.looseObject({
      index: z.number().int(),
      message: z.looseObject({ role: z.literal('assistant'), content: z.string() }),
      finish_reason: z.string(),
    }),
  ),
  usage: z.looseObject({
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
    total_tokens: z.number().int(),
  }),
});

export const DOCUMENTED_RESPONSES: Record<string, Record<number, DocumentedResponse>> = {
  'GET /v1/whoami': {
    200: z.looseObject({ kind: z.enum(['admin', 'tenant']), tenant: z.string().nullable() }),
  },
  'GET /v1/overview': { 200: overviewSchema },
  [`GET ${T}/overview`]: { 200: overviewSchema },
  'GET /v1/tenants': { 200: list('tenants', tenantSchema) },
  'POST /v1/tenants': upsert(one('tenant', tenantSchema)),
  [`GET ${T}`]: { 200: one('tenant', tenantSchema) },
  [`PATCH ${T}`]: { 200: one('tenant', tenantSchema) },
  [`GET ${T}/usage`]: { 200: tenantUsageSchema },
  [`GET ${T}/tokens`]: { 200: list('tokens', tokenSchema) },
  [`POST ${T}/tokens`]: {
    201: z.looseObject({
      id: z.string(),
      name: z.string(),
      token: z.string().describe('shown once: the bearer token'),
      created_at: z.string(),
    }),
  },
  [`GET ${T}/agents`]: { 200: list('agents', agentSchema) },
  [`PUT ${T}/agents/:agent`]: upsert(one('agent', agentSchema)),
  [`GET ${T}/agents/:agent`]: { 200: one('agent', agentSchema) },
  [`GET ${T}/runs`]: { 200: page('runs', runSchema) },
  [`GET ${T}/runs/:id`]: { 200: one('run', runSchema) },
  [`GET ${T}/runs/:id/wait`]: {
    200: z.looseObject({
      run: runSchema,
      timed_out: z.boolean().describe('true: timeout_ms passed before the run ended'),
    }),
  },
  [`POST ${T}/runs/:id/cancel`]: { 200: one('run', runSchema) },
  [`GET ${T}/runs/:id/trace`]: { 200: list('events', traceEventSchema) },
  [`GET ${T}/runs/:id/entries`]: { 200: list('entries', entrySchema) },
  [`GET ${T}/runs/:id/events`]: {
    200: sse('the run events as server-sent events (id = seq; resume with Last-Event-ID)'),
  },
  [`GET ${T}/changes`]: { 200: sse('store changes of the tenant as server-sent events') },
  [`GET ${T}/approvals`]: { 200: list('approvals', pendingApprovalSchema) },
  [`GET ${T}/runs/:id/approvals`]: { 200: list('approvals', approvalSchema) },
  [`POST ${T}/runs/:id/approvals/:call_id`]: { 200: one('approval', approvalSchema) },
  [`GET ${T}/threads/:agent`]: { 200: page('threads', threadSummarySchema) },
  [`GET ${T}/threads/:agent/:scope`]: { 200: threadSchema },
  [`GET ${T}/deliveries`]: { 200: page('deliveries', deliverySchema) },
  [`POST ${T}/deliveries/claim`]: { 200: list('deliveries', claimedDeliverySchema) },
  [`POST ${T}/deliveries/:id/ack`]: { 200: one('delivery', deliverySchema) },
  [`POST ${T}/deliveries/:id/retry`]: { 200: one('delivery', deliverySchema) },
  [`GET ${T}/tools`]: { 200: list('tools', toolDescriptionSchema) },
  [`GET ${T}/secrets`]: { 200: list('secrets', secretInfoSchema) },
  [`PUT ${T}/secrets/:name`]: upsert(z.looseObject({ name: z.string(), created: z.boolean() })),
  [`GET ${T}/mcp`]: { 200: list('servers', mcpServerSchema) },
  [`GET ${T}/mcp/:name`]: { 200: mcpServerSchema },
  [`PUT ${T}/mcp/:name`]: upsert(mcpServerSchema),
  [`GET ${T}/wasm-tools`]: { 200: list('tools', wasmToolSchema) },
  [`GET ${T}/wasm-tools/:name`]: { 200: wasmToolSchema },
  [`PUT ${T}/wasm-tools/:name`]: upsert(wasmToolSchema),
  [`GET ${T}/artifacts`]: { 200: page('items', artifactStatSchema) },
  [`GET ${T}/artifacts/*`]: {
    200: {
      raw: true,
      description: 'the artifact bytes with its content type; ETag is the sha256',
      content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
    },
    304: { raw: true, description: 'not modified (If-None-Match matched the ETag)', content: {} },
  },
  [`PUT ${T}/artifacts/*`]: upsert(one('artifact', artifactStatSchema)),
  [`GET ${T}/schedules`]: { 200: page('schedules', scheduleSchema) },
  [`PUT ${T}/schedules/:name`]: upsert(one('schedule', scheduleSchema)),
  [`GET ${T}/schedules/:name`]: { 200: one('schedule', scheduleSchema) },
  [`POST ${T}/schedules/:name/trigger`]: { 200: scheduleFired, 202: scheduleFired },
  [`GET ${T}/memory/:namespace`]: { 200: page('items', memoryFactSchema) },
  [`GET ${T}/memory/:namespace/search`]: {
    200: list(
      'results',
      z.looseObject({
        id: z.string(),
        text: z.string(),
        score: z.number(),
        lexical_rank: z.number().int().nullable(),
        semantic_rank: z.number().int().nullable(),
      }),
    ),
  },
  [`GET ${T}/memory/:namespace/:id`]: { 200: one('fact', memoryFactSchema) },
  [`PUT ${T}/memory/:namespace/:id`]: upsert(one('fact', memoryFactSchema)),
  [`POST ${T}/presets/memory-maintenance`]: upsert(
    z.looseObject({
      agent: agentSchema.nullable(),
      schedule: scheduleSchema.nullable(),
      created: z.looseObject({ agent: z.boolean(), schedule: z.boolean() }),
    }),
  ),
  [`GET ${T}/webhooks`]: { 200: list('webhooks', webhookSchema) },
  [`PUT ${T}/webhooks/:name`]: { 200: one('webhook', webhookSchema), 201: webhookWithSecret },
  [`GET ${T}/webhooks/:name`]: { 200: one('webhook', webhookSchema) },
  [`POST ${T}/webhooks/:name/rotate`]: { 200: webhookWithSecret },
  [`DELETE ${T}/webhooks/:name`]: { 200: z.looseObject({ deleted: z.literal(true) }) },
  [`GET ${T}/openai/models`]: {
    200: z.looseObject({
      object: z.literal('list'),
      data: z.array(
        z.looseObject({
          id: z.string(),
          object: z.literal('model'),
          created: z.number().int(),
          owned_by: z.string(),
        }),
      ),
    }),
  },
  [`POST ${T}/openai/chat/completions`]: {
    200: chatCompletion.describe(
      'a chat.completion; with stream: true, chat.completion.chunk server-sent events instead',
    ),
  },
};
