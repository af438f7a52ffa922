// Agents: PUT takes the agent document as JSON or TOML (the same schema validates both),
// then checks every name it uses (families, tools, the model's provider) against what
// exists for the tenant.

import { z } from 'zod';
import { KeelError } from '../../errors.ts';
import { agentSpecSchema } from '../agent-schema.ts';
import type { ApiDepsWith, ZodApp } from '../deps.ts';
import { deletedSchema, namedListQuery, nameSchema, tenantParams } from '../schemas.ts';
import { listPager } from '../page-budget.ts';
import type { AgentStore } from '../../store/store.ts';
import type { KnownNamesFor } from '../../tools/known-names.ts';
import { assertAgentNamesKnown } from '../../tools/known-names.ts';
import { memoryFlushProblem } from '../../runtime/memory-flush.ts';

type Deps = ApiDepsWith<AgentStore>;

const agentParams = z.strictObject({ tenant: nameSchema, agent: nameSchema });

export function agentRoutes(app: ZodApp, deps: Deps, knownNamesFor: KnownNamesFor): void {
  const { store } = deps;
  const listPage = listPager(deps.config.tenant_limits.list_page_bytes);
  const tags = ['agents'];

  app.get(
    '/v1/tenants/:tenant/agents',
    {
      config: { auth: 'tenant' },
      schema: {
        tags,
        params: tenantParams,
        querystring: namedListQuery,
        description: 'By name, one page at a time (follow next_cursor).',
      },
    },
    async (request) => {
      const page = await listPage(request.query, (size, after) =>
        store.listAgents(request.params.tenant, size, after),
      );
      return { agents: page.items, next_cursor: page.next_cursor };
    },
  );

  app.put(
    '/v1/tenants/:tenant/agents/:agent',
    {
      config: { auth: 'tenant', accepts_toml: true },
      schema: {
        tags,
        params: agentParams,
        body: agentSpecSchema,
        description:
          'Create or replace an agent; content-type application/json or application/toml.',
      },
    },
    async (request, reply) => {
      const { tenant, agent: name } = request.params;
      await assertAgentNamesKnown(knownNamesFor, tenant, request.body);
      const flushProblem = memoryFlushProblem(request.body);
      if (flushProblem) {
        throw new KeelError('VALIDATION_FAILED', flushProblem, { fields: ['body.memory_flush'] });
      }
      const { agent, created } = await store.putAgent(
        tenant,
        name,
        request.body,
        deps.config.tenant_limits.agents,
      );
      return reply.code(created ? 201 : 200).send({ agent });
    },
  );

  app.get(
    '/v1/tenants/:tenant/agents/:agent',
    { config: { auth: 'tenant' }, schema: { tags, params: agentParams } },
    async (request) => {
      const agent = await store.getAgent(request.params.tenant, request.params.agent);
      if (!agent) throw new KeelError('AGENT_NOT_FOUND', `agent ${request.params.agent} not found`);
      return { agent };
    },
  );

  app.delete(
    '/v1/tenants/:tenant/agents/:agent',
    {
      config: { auth: 'tenant' },
      schema: { tags, params: agentParams, response: { 200: deletedSchema } },
    },
    async (request) => {
      const deleted = await store.deleteAgent(request.params.tenant, request.params.agent);
      if (!deleted) {
        throw new KeelError('AGENT_NOT_FOUND', `agent ${request.params.agent} not found`);
      }
      return { deleted: true as const };
    },
  );
}
