// POST T/presets/memory-maintenance (docs/memory.md): installs, idempotently, the
// memory-only agent `memory-maintainer` and a disabled weekly schedule for it.
// Installing makes no model call; enabling is an ordinary schedule update.
//
// Re-applying keeps operator edits: an existing memory-only maintainer keeps its spec
// (its model changes only when the body names one); an existing schedule for the
// maintainer is kept as is. An agent or schedule of that name that is something else
// is a 409 and nothing is written.

import { z } from 'zod';
import { KeelError } from '../../errors.ts';
import {
  MAINTAINER_AGENT,
  MAINTENANCE_CRON,
  MAINTENANCE_SCHEDULE,
  MAINTENANCE_TIMEZONE,
  maintainerSpec,
  maintenancePayload,
} from '../../memory/maintenance.ts';
import { scheduleWriteOf } from '../../schedules/schedule-input.ts';
import type { ApiDepsWith, ZodApp } from '../deps.ts';
import { nameSchema, tenantParams } from '../schemas.ts';
import type { AgentStore, ScheduleStore } from '../../store/store.ts';
import type { KnownNamesFor } from '../../tools/known-names.ts';
import { assertAgentNamesKnown } from '../../tools/known-names.ts';

type Deps = ApiDepsWith<AgentStore & ScheduleStore>;

const MODEL_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}\/[^\s\u0000-\u001f\u007f]{1,200}$/;

const presetBody = z
  .strictObject({
    model: z
      .string()
      .regex(MODEL_PATTERN, { message: 'must look like provider/model' })
      .optional()
      .describe('the model of the maintainer; required when it is first installed'),
    namespace: nameSchema
      .optional()
      .describe('the namespace the schedule maintains (default "default")'),
  })
  .nullish();

function isMemoryOnly(families: readonly string[] | undefined): boolean {
  return families !== undefined && families.length === 1 && families[0] === 'memory';
}

export function presetRoutes(
  app: ZodApp,
  deps: Deps,
  knownNamesFor: KnownNamesFor,
  now: () => number = Date.now,
): void {
  const { store } = deps;

  app.post(
    '/v1/tenants/:tenant/presets/memory-maintenance',
    {
      config: { auth: 'tenant' },
      schema: { tags: ['presets'], params: tenantParams, body: presetBody },
    },
    async (request, reply) => {
      const { tenant } = request.params;
      const model = request.body?.model;
      const namespace = request.body?.namespace ?? 'default';

      // Check everything first, so a conflict writes nothing.
      const agent = await store.getAgent(tenant, MAINTAINER_AGENT);
      if (agent && !isMemoryOnly(agent.allowed_families)) {
        throw new KeelError(
          'CONFLICT',
          `agent ${MAINTAINER_AGENT} exists with allowed_families other than ["memory"]; rename or delete it first`,
        );
      }
      if (!agent && model === undefined) {
        throw new KeelError(
          'VALIDATION_FAILED',
          'body.model: required when the maintainer is first installed (e.g. "openai/gpt-4.1-mini")',
        );
      }
      if (model !== undefined) {
        await assertAgentNamesKnown(knownNamesFor, tenant, { model });
      }
      const schedule = await store.getSchedule(tenant, MAINTENANCE_SCHEDULE);
      if (schedule && schedule.agent !== MAINTAINER_AGENT) {
        throw new KeelError(
          'CONFLICT',
          `schedule ${MAINTENANCE_SCHEDULE} exists for agent ${schedule.agent}; rename or delete it first`,
        );
      }

      let installedAgent = agent;
      let agentCreated = false;
      if (!agent || (model !== undefined && model !== agent.model)) {
        let spec = maintainerSpec(model as string);
        if (agent) {
          const { tenant: _tenant, name: _name, created_at: _c, updated_at: _u, ...kept } = agent;
          spec = { ...kept, model: model as string };
        }
        const result = await store.putAgent(
          tenant,
          MAINTAINER_AGENT,
          spec,
          deps.config.tenant_limits.agents,
        );
        installedAgent = result.agent;
        agentCreated = result.created;
      }

      let installedSchedule = schedule;
      let scheduleCreated = false;
      if (!schedule) {
        const write = scheduleWriteOf(
          {
            agent: MAINTAINER_AGENT,
            scope: `memory-maintenance/${namespace}`,
            payload: maintenancePayload(namespace),
            cron: MAINTENANCE_CRON,
            timezone: MAINTENANCE_TIMEZONE,
            enabled: false,
            misfire: 'skip',
          },
          now(),
        );
        const result = await store.putSchedule(tenant, MAINTENANCE_SCHEDULE, write);
        installedSchedule = result.schedule;
        scheduleCreated = result.created;
      }

      const { revision: _revision, ...publicSchedule } = installedSchedule ?? { revision: 0 };
      return reply.code(agentCreated || scheduleCreated ? 201 : 200).send({
        agent: installedAgent,
        schedule: installedSchedule ? publicSchedule : null,
        created: { agent: agentCreated, schedule: scheduleCreated },
      });
    },
  );
}
