// The agent document of `PUT T/agents/:agent` (docs/http-api.md, The agent document): every
// field with its default and range. The same schema serves JSON and TOML bodies.

import { z } from 'zod';
import { nestingProblem } from '../nesting.ts';
import type { AgentSpec } from '../types.ts';
import { jsonObjectSchema, nameSchema } from './schemas.ts';
import { freeTextSchema } from './text-checks.ts';

// provider name / model name; the model part may hold "/", ":" and "." (ollama/qwen3:8b,
// openrouter/anthropic/claude-3.5), but no whitespace or control characters.
const MODEL_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}\/[^\s\u0000-\u001f\u007f]{1,200}$/;

// The run loop walks output_schema against every final answer, recursively; a real
// schema is a few levels deep.
const MAX_OUTPUT_SCHEMA_DEPTH = 32;

// Recalled facts cost context on every turn; 20 is also memory_search's limit.
const MAX_RECALL_K = 20;

const toolNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, { message: 'must be a tool name' });

export const agentSpecSchema = z
  .strictObject({
    model: z
      .string()
      .regex(MODEL_PATTERN, { message: 'must look like provider/model, e.g. fixture/echo' })
      .describe('provider/model, e.g. fixture/echo, openai/gpt-4.1-mini, ollama/qwen3'),
    persona: freeTextSchema(100_000)
      .optional()
      .describe('system prompt; no control characters but tab, line feed, carriage return'),
    allowed_families: z
      .array(nameSchema)
      .max(100)
      .optional()
      .describe('omitted = every family; [] = no tools'),
    allowed_tools: z
      .array(toolNameSchema)
      .max(500)
      .optional()
      .describe('narrows further to these tool names'),
    max_steps: z.int().min(1).max(200).default(12).describe('model calls per run'),
    timeout_ms: z
      .int()
      .min(1_000)
      .max(86_400_000)
      .default(120_000)
      .describe('whole run, across resumes'),
    tool_timeout_ms: z.int().min(100).max(3_600_000).default(30_000).describe('per tool call'),
    temperature: z.number().min(0).max(2).default(0.2),
    max_tokens: z.int().min(1).max(1_000_000).default(4096).describe('per model call'),
    context_window: z
      .int()
      .min(0)
      .max(1000)
      .default(20)
      .describe('complete past turns of the thread sent to the model; 0 = none'),
    output_schema: jsonObjectSchema
      .superRefine((schema, context) => {
        const tooDeep = nestingProblem(schema, 'output_schema', MAX_OUTPUT_SCHEMA_DEPTH);
        if (tooDeep) context.addIssue({ code: 'custom', message: tooDeep.message });
      })
      .optional()
      .describe('JSON Schema object the final output must validate against'),
    on_uncertain_effect: z.enum(['tell_model', 'fail']).default('tell_model'),
    recall: z
      .strictObject({
        namespace: nameSchema.default('default').describe('memory namespace to recall from'),
        k: z.int().min(1).max(MAX_RECALL_K).default(5).describe('facts per turn'),
      })
      .optional()
      .describe('put the top k facts for the user message into the model context each turn'),
    require_approval: z
      .array(
        z.string().regex(/^[A-Za-z0-9*?][A-Za-z0-9._:*?-]{0,127}$/, {
          message: 'must be a tool name or a glob over tool names (* and ?)',
        }),
      )
      .max(100)
      .optional()
      .describe('tool names or globs whose calls wait for a person (docs/approvals.md)'),
    approval_timeout_ms: z
      .int()
      .min(1_000)
      .max(30 * 86_400_000)
      .optional()
      .describe('a pending approval is denied with APPROVAL_TIMEOUT after this; absent = never'),
    context_tokens: z
      .int()
      .min(256)
      .max(10_000_000)
      .optional()
      .describe('model input budget; oldest turns are summarised past it (docs/compaction.md)'),
    max_total_tokens: z
      .int()
      .min(1)
      .max(1e12)
      .optional()
      .describe('run budget: input + output tokens'),
    max_cost_usd: z.number().positive().max(1e6).optional().describe('run budget in USD (prices)'),
    memory_flush: z
      .boolean()
      .optional()
      .describe('before a compaction folds turns, one step to write lasting facts to memory'),
  })
  .describe('agent definition (application/json or application/toml)');

// Compile-time check: the parsed document is exactly an AgentSpec.
type ParsedAgentSpec = z.output<typeof agentSpecSchema>;
const _agentSpecMatches: (spec: ParsedAgentSpec) => AgentSpec = (spec) => spec;
void _agentSpecMatches;
