// `keel agents list|get|put|rm`: a tenant's agents.

import type { ResourceSpec } from './resource.ts';
import { resourceCommand, resourceUsage } from './resource.ts';

const AGENTS: ResourceSpec = {
  noun: 'agents',
  listPath: () => '/agents',
  listKey: 'agents',
  columns: [
    { title: 'NAME', value: (agent) => agent.name },
    { title: 'MODEL', value: (agent) => agent.model },
    { title: 'UPDATED', value: (agent) => agent.updated_at },
  ],
  itemPath: (_, name) => `/agents/${encodeURIComponent(name)}`,
  itemKey: 'agent',
  put: true,
};

export const AGENTS_USAGE = resourceUsage(AGENTS);
export const agentsCommand = resourceCommand(AGENTS);
