// Memory over REST (docs/http-api.md, docs/memory.md): keyset list, hybrid search, and
// get/put/delete of one fact. `search` is a route, never a fact id.

import { z } from 'zod';
import { KeelError } from '../../errors.ts';
import type { MemoryService } from '../../memory/service.ts';
import { MAX_QUERY_BYTES, SEARCH_MODES } from '../../memory/service.ts';
import { MAX_FACT_BYTES, utf8Length } from '../../memory/text.ts';
import type { ZodApp } from '../deps.ts';
import { listPager } from '../page-budget.ts';
import { cursorSchema, deletedSchema, nameSchema, queryInt } from '../schemas.ts';
import { metadataSchema } from '../text-checks.ts';

/**
 * How long a request waits for the embedder (a loaded cache takes well under this); a
 * first-start cache build answers 503 EMBEDDER_UNAVAILABLE with Retry-After instead.
 */
const EMBEDDER_WAIT_MS = 2_000;

const MEMORY_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

const memoryIdSchema = z
  .string()
  .regex(MEMORY_ID_PATTERN, { message: `must match ${MEMORY_ID_PATTERN.source}` })
  .refine((id) => id !== 'search', { message: '"search" is reserved (it is the search route)' })
  .describe('fact id: letters, digits, ".", "_", ":" and "-", at most 128');

const factTextSchema = z
  .string()
  .refine((text) => text.trim().length > 0, { message: 'must not be empty' })
  .refine((text) => utf8Length(text) <= MAX_FACT_BYTES, {
    message: `must be at most ${MAX_FACT_BYTES} bytes of UTF-8`,
  });

const namespaceParams = z.strictObject({ tenant: nameSchema, namespace: nameSchema });
const factParams = z.strictObject({
  tenant: nameSchema,
  namespace: nameSchema,
  id: memoryIdSchema,
});
const listQuery = z.strictObject({
  limit: queryInt(1, 200, 50),
  cursor: cursorSchema.optional(),
});
const searchQuery = z.strictObject({
  q: z
    .string()
    .refine((q) => q.trim().length > 0, { message: 'must not be empty' })
    .refine((q) => utf8Length(q) <= MAX_QUERY_BYTES, {
      message: `must be at most ${MAX_QUERY_BYTES} bytes`,
    }),
  limit: queryInt(1, 100, 10),
  mode: z
    .enum(SEARCH_MODES)
    .default('fused')
    .describe('fused (default), lexical (words only) or semantic (meaning only)'),
});
const putBody = z.strictObject({ text: factTextSchema, metadata: metadataSchema.optional() });

function notFound(namespace: string, id: string): KeelError {
  return new KeelError('MEMORY_NOT_FOUND', `no fact ${id} in memory namespace ${namespace}`);
}

/** `listPageBytes`: tenant_limits.list_page_bytes, the byte budget of one list page. */
export function memoryRoutes(app: ZodApp, memory: MemoryService, listPageBytes: number): void {
  const listPage = listPager(listPageBytes);
  const tags = ['memory'];
  const base = '/v1/tenants/:tenant/memory/:namespace';

  app.get(
    base,
    {
      config: { auth: 'tenant' },
      schema: { tags, params: namespaceParams, querystring: listQuery },
    },
    async (request) => {
      const { tenant, namespace } = request.params;
      const page = await listPage(request.query, (size, after) =>
        memory.list(tenant, namespace, size, after),
      );
      return { items: page.items, next_cursor: page.next_cursor };
    },
  );

  app.get(
    `${base}/search`,
    {
      config: { auth: 'tenant' },
      schema: {
        tags,
        params: namespaceParams,
        querystring: searchQuery,
        description:
          'Hybrid search: full text and embeddings fused with query-adaptive weights (docs/memory.md); each result names its lexical_rank and semantic_rank. mode=lexical or mode=semantic asks one side alone.',
      },
    },
    async (request) => {
      const { tenant, namespace } = request.params;
      await memory.ready(EMBEDDER_WAIT_MS);
      const { q, limit, mode } = request.query;
      return { results: await memory.search(tenant, namespace, q, limit, mode) };
    },
  );

  app.get(
    `${base}/:id`,
    { config: { auth: 'tenant' }, schema: { tags, params: factParams } },
    async (request) => {
      const { tenant, namespace, id } = request.params;
      const fact = await memory.get(tenant, namespace, id);
      if (!fact) throw notFound(namespace, id);
      return { fact };
    },
  );

  app.put(
    `${base}/:id`,
    { config: { auth: 'tenant' }, schema: { tags, params: factParams, body: putBody } },
    async (request, reply) => {
      const { tenant, namespace, id } = request.params;
      const { text, metadata } = request.body;
      await memory.ready(EMBEDDER_WAIT_MS);
      const { fact, created } = await memory.put(tenant, namespace, id, text, metadata ?? {});
      return reply.code(created ? 201 : 200).send({ fact });
    },
  );

  app.delete(
    `${base}/:id`,
    {
      config: { auth: 'tenant' },
      schema: { tags, params: factParams, response: { 200: deletedSchema } },
    },
    async (request) => {
      const { tenant, namespace, id } = request.params;
      if (!(await memory.delete(tenant, namespace, id))) throw notFound(namespace, id);
      return { deleted: true as const };
    },
  );
}
