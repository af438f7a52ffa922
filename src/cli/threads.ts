// `keel threads list|get|rm <agent> [scope]`: an agent's conversations, one per scope.

import type { ResourceSpec } from './resource.ts';
import { resourceCommand, resourceUsage } from './resource.ts';

/** The fields of GET …/threads/:agent/:scope this file reads (the rest is printed as is). */
interface ThreadPage {
  messages: unknown[];
  next_cursor?: string | null;
}

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
  // The route pages a thread's messages; `get` shows the whole thread, so it follows
  // next_cursor and prints one thread with every message.
  get: async ({ keel, tenant }, [agent = ''], scope) => {
    const thread = (await keel.threads.get(tenant, agent, scope)) as ThreadPage;
    const messages = [...thread.messages];
    let cursor = thread.next_cursor;
    while (cursor) {
      const page = (await keel.threads.get(tenant, agent, scope, { cursor })) as ThreadPage;
      messages.push(...page.messages);
      cursor = page.next_cursor;
    }
    const { next_cursor: _next, ...rest } = thread;
    return { ...rest, messages };
  },
  itemKey: null,
  remove: ({ keel, tenant }, [agent = ''], scope) => keel.threads.delete(tenant, agent, scope),
};

export const THREADS_USAGE = resourceUsage(THREADS);
export const threadsCommand = resourceCommand(THREADS);
