// Schedules: PUT a schedule document (exactly one of cron + timezone, every_ms, at),
// read, list, delete, and trigger a run now. The scheduler (src/schedules/) fires them.

import { z } from 'zod';
import { KeelError } from '../../errors.ts';
import { scheduleWriteOf } from '../../schedules/schedule-input.ts';
import { scheduleRun } from '../../schedules/scheduler.ts';
import type { Schedule } from '../../types.ts';
import { MISFIRE_POLICIES } from '../../types.ts';
import type { ApiDepsWith, ZodApp } from '../deps.ts';
import {
  cursorSchema,
  deletedSchema,
  destinationSchema,
  jsonObjectSchema,
  nameSchema,
  queryInt,
  requestIdSchema,
  scopeSchema,
  tenantParams,
} from '../schemas.ts';
import { listPager } from '../page-budget.ts';
import type { ScheduleStore } from '../../store/store.ts';

type Deps = ApiDepsWith<ScheduleStore>;

const scheduleParams = z.strictObject({ tenant: nameSchema, name: nameSchema });

const scheduleBodySchema = z
  .strictObject({
    agent: nameSchema,
    scope: scopeSchema,
    payload: jsonObjectSchema.default({}).describe('the run input, conventionally {text}'),
    cron: z.string().min(1).max(200).optional().describe('cron line (5–7 fields); needs timezone'),
    timezone: z.string().min(1).max(64).optional().describe('IANA time zone of the cron line'),
    every_ms: z
      .number()
      .int()
      .min(1000)
      .max(31_536_000_000)
      .optional()
      .describe('interval, ≥ 1000'),
    at: z.iso
      .datetime({ offset: true })
      .optional()
      .describe('one instant (RFC 3339), in the future'),
    enabled: z.boolean().default(true),
    misfire: z.enum(MISFIRE_POLICIES).default('run_once'),
    delivery: z.strictObject({ destination: destinationSchema }).nullable().optional(),
  })
  .describe('a schedule: exactly one of cron (+ timezone), every_ms, at');

const listQuery = z.strictObject({
  agent: nameSchema.optional(),
  scope: scopeSchema.optional(),
  limit: queryInt(1, 200, 50),
  cursor: cursorSchema.optional(),
});

const triggerBody = z
  .strictObject({ request_id: requestIdSchema.optional() })
  // fastify hands a request without a body over as null
  .nullish()
  .describe('request_id deduplicates repeated triggers');

/** The wire shape: the store's record without its internal revision counter. */
export function publicSchedule(schedule: Schedule): Omit<Schedule, 'revision'> {
  const { revision: _revision, ...rest } = schedule;
  return rest;
}

function scheduleNotFound(name: string): KeelError {
  return new KeelError('SCHEDULE_NOT_FOUND', `schedule ${name} not found`);
}

export function scheduleRoutes(app: ZodApp, deps: Deps, now: () => number = Date.now): void {
  const { store } = deps;
  const listPage = listPager(deps.config.tenant_limits.list_page_bytes);
  const tags = ['schedules'];

  app.get(
    '/v1/tenants/:tenant/schedules',
    { config: { auth: 'tenant' }, schema: { tags, params: tenantParams, querystring: listQuery } },
    async (request) => {
      const { agent, scope, limit, cursor } = request.query;
      const filter = {
        ...(agent === undefined ? {} : { agent }),
        ...(scope === undefined ? {} : { scope }),
      };
      const page = await listPage({ limit, cursor }, (size, after) =>
        store.listSchedules(request.params.tenant, filter, size, after),
      );
      return { schedules: page.items.map(publicSchedule), next_cursor: page.next_cursor };
    },
  );

  app.put(
    '/v1/tenants/:tenant/schedules/:name',
    {
      config: { auth: 'tenant' },
      schema: { tags, params: scheduleParams, body: scheduleBodySchema },
    },
    async (request, reply) => {
      const { tenant, name } = request.params;
      const write = {
        ...scheduleWriteOf(request.body, now()),
        max_schedules: deps.config.tenant_limits.schedules,
      };
      const { schedule, created } = await store.putSchedule(tenant, name, write);
      return reply.code(created ? 201 : 200).send({ schedule: publicSchedule(schedule) });
    },
  );

  app.get(
    '/v1/tenants/:tenant/schedules/:name',
    { config: { auth: 'tenant' }, schema: { tags, params: scheduleParams } },
    async (request) => {
      const schedule = await store.getSchedule(request.params.tenant, request.params.name);
      if (!schedule) throw scheduleNotFound(request.params.name);
      return { schedule: publicSchedule(schedule) };
    },
  );

  app.delete(
    '/v1/tenants/:tenant/schedules/:name',
    {
      config: { auth: 'tenant' },
      schema: { tags, params: scheduleParams, response: { 200: deletedSchema } },
    },
    async (request) => {
      const { tenant, name } = request.params;
      if (!(await store.deleteSchedule(tenant, name))) throw scheduleNotFound(name);
      return { deleted: true as const };
    },
  );

  app.post(
    '/v1/tenants/:tenant/schedules/:name/trigger',
    { config: { auth: 'tenant' }, schema: { tags, params: scheduleParams, body: triggerBody } },
    async (request, reply) => {
      const { tenant, name } = request.params;
      const schedule = await store.getSchedule(tenant, name);
      if (!schedule) throw scheduleNotFound(name);
      const result = await store.fireSchedule({
        mode: 'manual',
        tenant,
        name,
        // A manual trigger is a caller's enqueue like a turn: it counts against the
        // tenant's queued-runs quota (429 RATE_LIMITED past it, nothing written).
        run: {
          ...scheduleRun(schedule, request.body?.request_id ?? null),
          max_queued: deps.config.tenant_limits.queued_runs,
        },
      });
      const run = result.run;
      if (!run) throw scheduleNotFound(name);
      return reply.code(result.deduplicated ? 200 : 202).send({
        run_id: run.run_id,
        status: run.status,
        deduplicated: result.deduplicated,
        schedule: result.schedule ? publicSchedule(result.schedule) : null,
      });
    },
  );
}
