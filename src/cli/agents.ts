// `keel agents list|get|put|rm`: a tenant's agents.

import type { ResourceSpec } from './resource.ts';
import { resourceCommand, resourceUsage } from './resource.ts';

const AGENTS: ResourceSpec = {
  noun: 'agents',
  list: ({ keel, tenant }, _, query) => keel.agents.list(tenant, query),
  listKey: 'agents',
  // `keel agents list` showed every agent before the route was paged; it still does.
  allPages: true,
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
