import { z } from 'zod';
import { defineTool } from '../tool.ts';
import {
  asToolErrors,
  describeSchedule,
  scheduleNameSchema,
  schedulePort,
} from './schedule-tools-shared.ts';

export const schedulePutTool = defineTool({
  name: 'schedule_put',
  family: 'schedule',
  effect: 'idempotent',
  description:
    'Create or replace a schedule that starts a run of this agent in this conversation: exactly one of cron (with an IANA timezone), every_ms (≥ 1000) or at (RFC 3339, in the future). payload is the run input, e.g. {"text": "…"}.',
  input: z.strictObject({
    name: scheduleNameSchema,
    payload: z
      .record(z.string(), z.json())
      .default({})
      .describe('the run input, conventionally {text}'),
    cron: z.string().min(1).max(200).optional().describe('e.g. "0 8 * * *"'),
    timezone: z.string().min(1).max(64).optional().describe('IANA time zone, required with cron'),
    every_ms: z.number().int().min(1000).optional(),
    at: z.string().min(1).max(64).optional().describe('RFC 3339 instant'),
    enabled: z.boolean().optional(),
    misfire: z
      .enum(['skip', 'run_once'])
      .optional()
      .describe('after downtime: skip or run once (default)'),
    delivery: z.strictObject({ destination: z.string().min(1).max(512) }).optional(),
  }),
  run: async ({ name, ...doc }, context) => {
    const { schedule, created } = await asToolErrors(() =>
      schedulePort(context).put(name, { ...doc, payload: doc.payload as Record<string, never> }),
    );
    return { schedule: describeSchedule(schedule), created };
  },
});
