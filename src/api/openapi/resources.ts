// Zod schemas of what the routes answer (the resources of src/types.ts as JSON). They
// only document: /openapi.json is generated from them, and test/openapi-responses.test.ts
// checks real answers against the document. Objects are loose (extra fields allowed) so a
// new field is an additive change; every listed field is required unless it can be absent.

import { z } from 'zod';
import { RUN_ERROR_CODES } from '../../errors.ts';
import { MISFIRE_POLICIES } from '../../types.ts';
import { deliveryStatusSchema, jsonObjectSchema, runStatusSchema } from '../schemas.ts';

const timestamp = z.string().describe('ISO 8601 time');
const nullableTimestamp = timestamp.nullable();
const nextCursor = z
  .string()
  .nullable()
  .describe('pass as ?cursor= for the next page; null at the end');

export const usageSchema = z.looseObject({
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  model_calls: z.number().int(),
  tool_calls: z.number().int(),
});

export const runSchema = z
  .looseObject({
    run_id: z.string(),
    tenant: z.string(),
    agent: z.string(),
    scope: z.string(),
    source: z.enum(['api', 'schedule']),
    input: jsonObjectSchema,
    request_id: z.string().nullable(),
    delivery: z.looseObject({ destination: z.string() }).nullable(),
    status: runStatusSchema,
    output: jsonObjectSchema.nullable(),
    error: z.looseObject({ code: z.enum(RUN_ERROR_CODES), message: z.string() }).nullable(),
    attempt: z.number().int(),
    steps: z.number().int(),
    usage: usageSchema,
    created_at: timestamp,
    started_at: nullableTimestamp,
    finished_at: nullableTimestamp,
  })
  .meta({ id: 'Run' });

export const tenantSchema = z
  .looseObject({
    name: z.string(),
    metadata: jsonObjectSchema,
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Tenant' });

export const agentSchema = z
  .looseObject({
    tenant: z.string(),
    name: z.string(),
    model: z.string(),
    max_steps: z.number().int(),
    timeout_ms: z.number().int(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Agent' });

export const deliverySchema = z
  .looseObject({
    delivery_id: z.string(),
    tenant: z.string(),
    run_id: z.string(),
    destination: z.string(),
    status: deliveryStatusSchema,
    attempt: z.number().int(),
    idempotency_key: z.string(),
    next_attempt_at: timestamp,
    claim_expires_at: nullableTimestamp,
    last_error: z.string().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Delivery' });

export const claimedDeliverySchema = z
  .looseObject({
    delivery_id: z.string(),
    run_id: z.string(),
    destination: z.string(),
    payload: jsonObjectSchema,
    attempt: z.number().int(),
    claim_token: z.string(),
    claim_expires_at: timestamp,
    idempotency_key: z.string(),
  })
  .meta({ id: 'ClaimedDelivery' });

export const threadSummarySchema = z.looseObject({
  scope: z.string(),
  turns: z.number().int(),
  revision: z.number().int(),
  updated_at: timestamp,
});

export const threadSchema = z
  .looseObject({
    scope: z.string(),
    revision: z.number().int(),
    turns: z.number().int(),
    messages: z.array(
      z.looseObject({
        role: z.enum(['user', 'assistant']),
        content: z.string(),
        run_id: z.string(),
        ts: timestamp,
      }),
    ),
    updated_at: timestamp,
  })
  .meta({ id: 'Thread' });

export const artifactStatSchema = z
  .looseObject({
    path: z.string(),
    content_type: z.string(),
    size_bytes: z.number().int(),
    sha256: z.string(),
    metadata: jsonObjectSchema,
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Artifact' });

export const scheduleSchema = z
  .looseObject({
    tenant: z.string(),
    name: z.string(),
    agent: z.string(),
    scope: z.string(),
    payload: jsonObjectSchema,
    cron: z.string().nullable(),
    timezone: z.string().nullable(),
    every_ms: z.number().int().nullable(),
    at: z.string().nullable(),
    misfire: z.enum(MISFIRE_POLICIES),
    delivery: z.looseObject({ destination: z.string() }).nullable(),
    enabled: z.boolean(),
    next_fire_at: nullableTimestamp,
    last_fired_at: nullableTimestamp,
    last_run_id: z.string().nullable(),
    last_error: z.string().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Schedule' });

export const approvalSchema = z
  .looseObject({
    run_id: z.string(),
    call_id: z.string(),
    tenant: z.string(),
    agent: z.string(),
    scope: z.string(),
    step: z.number().int(),
    tool: z.string(),
    arguments: z.string(),
    status: z.string(),
    note: z.string().nullable(),
    requested_at: timestamp,
    expires_at: nullableTimestamp,
    decided_at: nullableTimestamp,
  })
  .meta({ id: 'Approval' });

export const pendingApprovalSchema = approvalSchema
  .extend({
    input_text: z
      .string()
      .describe("the run's input: its text, else the input as JSON; the first 2,000 characters"),
  })
  .meta({ id: 'PendingApproval' });

export const memoryFactSchema = z
  .looseObject({
    id: z.string(),
    text: z.string(),
    metadata: jsonObjectSchema,
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'MemoryFact' });

export const traceEventSchema = z.looseObject({
  seq: z.number().int(),
  ts: timestamp,
  type: z.string(),
  data: jsonObjectSchema,
});

export const toolDescriptionSchema = z.looseObject({
  name: z.string(),
  family: z.string(),
  description: z.string(),
  input_schema: jsonObjectSchema,
  effect: z.string(),
});

export const mcpServerSchema = z
  .looseObject({
    name: z.string(),
    enabled: z.boolean(),
    transport: z.string(),
    allowed_tools: z.array(z.string()).nullable(),
    tools: z.array(
      z.looseObject({
        name: z.string(),
        mcp_name: z.string(),
        effect: z.string(),
        allowed: z.boolean(),
      }),
    ),
    last_error: z.string().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'McpServer' });

export const wasmToolSchema = z
  .looseObject({
    name: z.string(),
    tool: z.string(),
    module_bytes: z.number().int(),
    sha256: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'WasmTool' });

export const webhookSchema = z.looseObject({
  name: z.string(),
  url: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
});

export const overviewSchema = z.looseObject({
  tenant: z.string().nullable(),
  runs_by_status: z.record(z.string(), z.number().int()),
  queue_depth: z.number().int(),
  oldest_queued_age_ms: z.number().nullable(),
  deliveries_by_status: z.record(z.string(), z.number().int()),
  deliveries_dead: z.number().int(),
  schedules_failing: z.number().int(),
});

export const runAcceptedSchema = z.looseObject({
  run_id: z.string(),
  status: runStatusSchema,
  deduplicated: z.boolean(),
});

export { nextCursor };

/** Tokens and cost of a usage group or range (src/store/rules/usage.ts UsageTotals). */
const usageTotalsSchema = z.looseObject({
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  total_tokens: z.number().int(),
  model_calls: z.number().int(),
  cost_usd: z.number(),
});

/** GET T/usage: groups of the usage ledger and the tenant's daily budget. */
export const tenantUsageSchema = z.looseObject({
  from: z.string(),
  to: z.string(),
  group_by: z.enum(['agent', 'day', 'model', 'thread', 'run']),
  groups: z.array(usageTotalsSchema.extend({ key: z.string() })),
  total: usageTotalsSchema,
  limits: z.looseObject({
    daily_tokens: z.number().int().nullable(),
    daily_cost_usd: z.number().nullable(),
  }),
});
