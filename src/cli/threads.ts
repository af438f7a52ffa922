// `keel threads list|get|rm <agent> [scope]`: an agent's conversations, one per scope.

import type { ResourceSpec } from './resource.ts';
import { resourceCommand, resourceUsage } from './resource.ts';

const THREADS: ResourceSpec = {
  noun: 'threads',
  parents: ['agent'],
  listPath: ([agent = '']) => `/threads/${encodeURIComponent(agent)}`,
  listKey: 'threads',
  columns: [
    { title: 'SCOPE', value: (thread) => thread.scope },
    { title: 'TURNS', value: (thread) => thread.turns },
    { title: 'UPDATED', value: (thread) => thread.updated_at },
  ],
  itemPath: ([agent = ''], scope) =>
    `/threads/${encodeURIComponent(agent)}/${encodeURIComponent(scope)}`,
  itemKey: null,
};

export const THREADS_USAGE = resourceUsage(THREADS);
export const threadsCommand = resourceCommand(THREADS);
