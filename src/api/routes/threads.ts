// Threads: the rolling context per (agent, scope). The scope is percent-encoded in the
// path; fastify decodes it before validation. One thread's messages come a page at a
// time (../thread-page.ts).

import { z } from 'zod';
import { KeelError } from '../../errors.ts';
import type { ApiDepsWith, ZodApp } from '../deps.ts';
import { cursorSchema, deletedSchema, nameSchema, queryInt, scopeSchema } from '../schemas.ts';
import { listPager } from '../page-budget.ts';
import type { AgentStore } from '../../store/store.ts';
import { threadCursorStart, threadMessagePage } from '../thread-page.ts';

type Deps = ApiDepsWith<AgentStore>;

const agentParams = z.strictObject({ tenant: nameSchema, agent: nameSchema });
const threadParams = z.strictObject({ tenant: nameSchema, agent: nameSchema, scope: scopeSchema });
const listQuery = z.strictObject({
  limit: queryInt(1, 200, 50),
  cursor: cursorSchema.optional(),
});
const messagesQuery = z.strictObject({
  limit: queryInt(1, 1000, 1000).describe('messages in this page (also cut at the byte budget)'),
  cursor: cursorSchema.optional(),
});

function threadNotFound(agent: string, scope: string): KeelError {
  return new KeelError('THREAD_NOT_FOUND', `no thread for agent ${agent} and that scope`, {
    scope,
  });
}

export function threadRoutes(app: ZodApp, deps: Deps): void {
  const { store } = deps;
  const listPage = listPager(deps.config.tenant_limits.list_page_bytes);
  const tags = ['threads'];

  app.get(
    '/v1/tenants/:tenant/threads/:agent',
    { config: { auth: 'tenant' }, schema: { tags, params: agentParams, querystring: listQuery } },
    async (request) => {
      const { tenant, agent } = request.params;
      const page = await listPage(request.query, (size, after) =>
        store.listThreads(tenant, agent, size, after),
      );
      return { threads: page.items, next_cursor: page.next_cursor };
    },
  );

  app.get(
    '/v1/tenants/:tenant/threads/:agent/:scope',
    {
      config: { auth: 'tenant' },
      schema: {
        tags,
        params: threadParams,
        querystring: messagesQuery,
        description:
          'The thread with one page of its messages, oldest first; next_cursor pages on (409 CONFLICT when a turn changed the thread meanwhile).',
      },
    },
    async (request) => {
      const { tenant, agent, scope } = request.params;
      const thread = await store.getThread(tenant, agent, scope);
      if (!thread) throw threadNotFound(agent, scope);
      const from = threadCursorStart(request.query.cursor, thread);
      const page = await listPage({ limit: request.query.limit }, async (size) =>
        threadMessagePage(thread, from, size),
      );
      return { ...thread, messages: page.items, next_cursor: page.next_cursor };
    },
  );

  app.delete(
    '/v1/tenants/:tenant/threads/:agent/:scope',
    {
      config: { auth: 'tenant' },
      schema: { tags, params: threadParams, response: { 200: deletedSchema } },
    },
    async (request) => {
      const { tenant, agent, scope } = request.params;
      if (!(await store.deleteThread(tenant, agent, scope))) throw threadNotFound(agent, scope);
      return { deleted: true as const };
    },
  );
}
