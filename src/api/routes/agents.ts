// Agents: PUT takes the agent document as JSON or TOML (the same schema validates both).

import { z } from 'zod';
import { KeelError } from '../../errors.ts';
import { agentSpecSchema } from '../agent-schema.ts';
import type { ApiDepsWith, ZodApp } from '../deps.ts';
import { deletedSchema, nameSchema, tenantParams } from '../schemas.ts';
import type { AgentStore } from '../../store/store.ts';
import { unknownApprovalPatterns } from '../../runtime/approvals.ts';

type Deps = ApiDepsWith<AgentStore>;

const agentParams = z.strictObject({ tenant: nameSchema, agent: nameSchema });

export function agentRoutes(app: ZodApp, deps: Deps): void {
  const { store } = deps;
  const tags = ['agents'];

  app.get(
    '/v1/tenants/:tenant/agents',
    { config: { auth: 'tenant' }, schema: { tags, params: tenantParams } },
    async (request) => ({ agents: await store.listAgents(request.params.tenant) }),
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
      const patterns = request.body.require_approval ?? [];
      if (patterns.length > 0) {
        const tools = deps.toolsFor ? await deps.toolsFor(tenant) : deps.tools;
        const names = tools ? tools.all().map((tool) => tool.name) : [];
        const unknown = unknownApprovalPatterns(patterns, names);
        if (unknown.length > 0) {
          throw new KeelError(
            'VALIDATION_FAILED',
            `body.require_approval: ${unknown.map((p) => JSON.stringify(p)).join(', ')} names no tool (see GET T/tools; mcp_* and wasm_* patterns are accepted before their tools exist)`,
            { fields: ['body.require_approval'] },
          );
        }
      }
      const { agent, created } = await store.putAgent(tenant, name, request.body);
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
