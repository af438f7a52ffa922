// GET T/tools?agent=: the tools an agent may use (what its model is sent), or every tool
// of this process without `agent`.

import { z } from 'zod';
import { KeelError } from '../../errors.ts';
import type { ApiDepsWith, ZodApp } from '../deps.ts';
import { nameSchema, tenantParams } from '../schemas.ts';
import type { AgentStore } from '../../store/store.ts';

type Deps = ApiDepsWith<AgentStore>;

const toolsQuery = z.strictObject({ agent: nameSchema.optional() });

export function toolRoutes(app: ZodApp, deps: Deps): void {
  const { store } = deps;

  app.get(
    '/v1/tenants/:tenant/tools',
    {
      config: { auth: 'tenant' },
      schema: { tags: ['tools'], params: tenantParams, querystring: toolsQuery },
    },
    async (request) => {
      const { tenant } = request.params;
      const name = request.query.agent;
      const tools = deps.toolsFor ? await deps.toolsFor(tenant) : deps.tools;
      if (!tools) return { tools: [] };
      let listed = tools.all();
      if (name !== undefined) {
        const agent = await store.getAgent(tenant, name);
        if (!agent) throw new KeelError('AGENT_NOT_FOUND', `agent ${name} not found`);
        listed = tools.visibleTo(agent);
      }
      return { tools: listed.map((tool) => tools.describe(tool)) };
    },
  );
}
