// `keel threads list|get|rm <agent> [scope]`: an agent's conversations, one per scope.

import type { ResourceSpec } from './resource.ts';
import { resourceCommand, resourceUsage } from './resource.ts';

const THREADS: ResourceSpec = {
  noun: 'threads',
  parents: ['agent'],
  list: ({ keel, tenant }, [agent = ''], query) => keel.threads.list(tenant, agent, query),
  listKey: 'threads',
  columns: [
    { title: 'SCOPE', value: (thread) => thread.scope },
    { title: 'TURNS', value: (thread) => thread.turns },
    { title: 'UPDATED', value: (thread) => thread.updated_at },
  ],
  get: ({ keel, tenant }, [agent = ''], scope) => keel.threads.get(tenant, agent, scope),
  itemKey: null,
  remove: ({ keel, tenant }, [agent = ''], scope) => keel.threads.delete(tenant, agent, scope),
};

export const THREADS_USAGE = resourceUsage(THREADS);
export const threadsCommand = resourceCommand(THREADS);
