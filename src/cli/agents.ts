// `keel agents list|get|put|rm`: a tenant's agents.

import type { ResourceSpec } from './resource.ts';
import { resourceCommand, resourceUsage } from './resource.ts';

const AGENTS: ResourceSpec = {
  noun: 'agents',
  // The agents list is not paged (the route takes no --limit/--cursor).
  list: ({ keel, tenant }) => keel.agents.list(tenant),
  listKey: 'agents',
  columns: [
    { title: 'NAME', value: (agent) => agent.name },
    { title: 'MODEL', value: (agent) => agent.model },
    { title: 'UPDATED', value: (agent) => agent.updated_at },
  ],
  get: ({ keel, tenant }, _, name) => keel.agents.get(tenant, name),
  itemKey: 'agent',
  put: ({ keel, tenant }, name, text, type) => keel.agents.putText(tenant, name, text, type),
  remove: ({ keel, tenant }, _, name) => keel.agents.delete(tenant, name),
};

export const AGENTS_USAGE = resourceUsage(AGENTS);
export const agentsCommand = resourceCommand(AGENTS);
