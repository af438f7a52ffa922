// Runs: list, get, long-poll wait, cancel and the raw trace. A run id of another tenant
// is simply not found through this tenant's path (existence is not leaked).

import { abortOnDisconnect } from '../streams.ts';
import { z } from 'zod';
import { KeelError } from '../../errors.ts';
import { waitForRun } from '../../runtime/wait.ts';
import type { ApiDepsWith, ZodApp } from '../deps.ts';
import {
  cursorSchema,
  nameSchema,
  queryInt,
  runStatusSchema,
  scopeSchema,
  tenantParams,
} from '../schemas.ts';
import { listPager } from '../page-budget.ts';
import type { RunStore, StoreChanges } from '../../store/store.ts';

// Without loadEntries: a whole run can be hundreds of MB, so the API reads its pages only.
type Deps = ApiDepsWith<Omit<RunStore, 'loadEntries'> & StoreChanges>;

const runParams = z.strictObject({
  tenant: nameSchema,
  id: z.string().min(1).max(64).describe('run id (UUIDv7)'),
});

const listQuery = z.strictObject({
  agent: nameSchema.optional(),
  scope: scopeSchema.optional(),
  status: runStatusSchema.optional(),
  source: z.enum(['api', 'schedule']).optional(),
  limit: queryInt(1, 200, 50),
  cursor: cursorSchema.optional(),
});

const waitQuery = z.strictObject({ timeout_ms: queryInt(0, 120_000, 30_000) });
const entriesQuery = z.strictObject({
  after: queryInt(0, 2_000_000_000, 0).describe('return entries with seq greater than this'),
  limit: queryInt(1, 1000, 1000).describe('entries in this page (also cut at the byte budget)'),
});
const traceQuery = z.strictObject({
  after: queryInt(0, 2_000_000_000, 0).describe('return events with seq greater than this'),
  limit: queryInt(1, 1000, 1000),
});
const cancelBody = z
  .strictObject({ reason: z.string().max(1000).optional() })
  // fastify hands a request without a body over as null
  .nullish()
  .describe('optional; an empty body is fine');

function runNotFound(id: string): KeelError {
  return new KeelError('RUN_NOT_FOUND', `run ${id} not found`);
}

export function runRoutes(app: ZodApp, deps: Deps): void {
  const { store } = deps;
  const listPage = listPager(deps.config.tenant_limits.list_page_bytes);
  const tags = ['runs'];

  app.get(
    '/v1/tenants/:tenant/runs',
    { config: { auth: 'tenant' }, schema: { tags, params: tenantParams, querystring: listQuery } },
    async (request) => {
      const { limit, cursor, ...filter } = request.query;
      const page = await listPage({ limit, cursor }, (size, after) =>
        store.listRuns(request.params.tenant, filter, size, after),
      );
      return { runs: page.items, next_cursor: page.next_cursor };
    },
  );

  app.get(
    '/v1/tenants/:tenant/runs/:id',
    { config: { auth: 'tenant' }, schema: { tags, params: runParams } },
    async (request) => {
      const run = await store.getRun(request.params.tenant, request.params.id);
      if (!run) throw runNotFound(request.params.id);
      return { run };
    },
  );

  app.get(
    '/v1/tenants/:tenant/runs/:id/wait',
    {
      config: { auth: 'tenant', long_lived: true },
      schema: { tags, params: runParams, querystring: waitQuery },
    },
    async (request, reply) => {
      const disconnect = abortOnDisconnect(reply);
      const result = await waitForRun(
        store,
        request.params.tenant,
        request.params.id,
        request.query.timeout_ms,
        disconnect.signal,
      );
      if (!result) throw runNotFound(request.params.id);
      return result;
    },
  );

  app.post(
    '/v1/tenants/:tenant/runs/:id/cancel',
    { config: { auth: 'tenant' }, schema: { tags, params: runParams, body: cancelBody } },
    async (request) => {
      const reason = request.body?.reason ?? null;
      const run = await store.cancelRun(request.params.tenant, request.params.id, reason);
      if (!run) throw runNotFound(request.params.id);
      return { run };
    },
  );

  app.get(
    '/v1/tenants/:tenant/runs/:id/trace',
    { config: { auth: 'tenant' }, schema: { tags, params: runParams, querystring: traceQuery } },
    async (request) => {
      const { tenant, id } = request.params;
      const events = await store.getTrace(tenant, id, request.query.after, request.query.limit);
      if (!events) throw runNotFound(id);
      return { events };
    },
  );

  app.get(
    '/v1/tenants/:tenant/runs/:id/entries',
    {
      config: { auth: 'tenant' },
      schema: {
        tags,
        description:
          "The run's own entries (user input, assistant text and tool calls with their arguments, tool results, notes) in order, a page at a time: next_after (null on the last page) is the `after` of the next.",
        params: runParams,
        querystring: entriesQuery,
      },
    },
    async (request) => {
      const { tenant, id } = request.params;
      // Tool results make entries large (a run of 200 steps can hold hundreds of MB): the
      // store reads one page, cut again at the list byte budget.
      const { after, limit } = request.query;
      const page = await listPage({ limit }, async (size) => {
        const entries = await store.getEntriesPage(tenant, id, after, size);
        if (!entries) throw runNotFound(id);
        return {
          items: entries.items,
          next_cursor: entries.next_after === null ? null : String(entries.next_after),
        };
      });
      return {
        entries: page.items,
        next_after: page.next_cursor === null ? null : Number(page.next_cursor),
      };
    },
  );
}
