// Artifacts: per-tenant byte blobs by path. PUT stores the raw body with its content
// type (any type: these routes get their own raw body parser and the artifact size
// limit, in an encapsulated plugin so no other route accepts arbitrary bodies); GET
// returns the bytes with `ETag: "<sha256>"` and answers If-None-Match with 304, always
// with the headers that keep stored bytes from running as keel's origin
// (../artifact-headers.ts).

import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { KeelError } from '../../errors.ts';
import { artifactPathProblem } from '../../tools/builtin/artifact-path.ts';
import type { ApiDepsWith, ZodApp } from '../deps.ts';
import { cursorSchema, deletedSchema, nameSchema, queryInt, tenantParams } from '../schemas.ts';
import { listPager } from '../page-budget.ts';
import { artifactHeaders } from '../artifact-headers.ts';
import type { ArtifactStore } from '../../store/store.ts';

type Deps = ApiDepsWith<ArtifactStore>;

const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;
const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

const artifactPathSchema = z
  .string()
  .superRefine((value, context) => {
    const problem = artifactPathProblem(value);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  })
  .describe('artifact path: "/"-separated segments, no empty, "." or ".." segment, ≤ 512 bytes');

const artifactParams = z.strictObject({ tenant: nameSchema, '*': artifactPathSchema });

const listQuery = z.strictObject({
  prefix: z
    .string()
    .max(512)
    .regex(/^[^\u0000-\u001f\u007f]*$/, { message: 'must not contain control characters' })
    .default('')
    .describe('only paths that start with this'),
  limit: queryInt(1, 500, 100),
  cursor: cursorSchema.optional(),
});

/** Does an If-None-Match header name this entity tag (weak comparison, or `*`)? */
function etagMatches(header: string | undefined, sha256: string): boolean {
  if (header === undefined) return false;
  return header
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === '*' || tag === `"${sha256}"`);
}

function contentTypeOf(header: string | undefined): string {
  const value = header?.trim() ?? '';
  if (value === '') return DEFAULT_CONTENT_TYPE;
  if (value.length > 255 || CONTROL_CHARACTERS.test(value)) {
    throw new KeelError(
      'VALIDATION_FAILED',
      'headers.content-type: must be at most 255 printable characters',
    );
  }
  return value;
}

function artifactNotFound(path: string): KeelError {
  return new KeelError('ARTIFACT_NOT_FOUND', `artifact ${path.slice(0, 200)} not found`);
}

export function artifactRoutes(app: ZodApp, deps: Deps): void {
  const { store } = deps;
  const listPage = listPager(deps.config.tenant_limits.list_page_bytes);
  const tags = ['artifacts'];

  app.get(
    '/v1/tenants/:tenant/artifacts',
    { config: { auth: 'tenant' }, schema: { tags, params: tenantParams, querystring: listQuery } },
    async (request) => {
      const page = await listPage(request.query, (size, after) =>
        store.listArtifacts(request.params.tenant, request.query.prefix, size, after),
      );
      return { items: page.items, next_cursor: page.next_cursor };
    },
  );

  app.get(
    '/v1/tenants/:tenant/artifacts/*',
    { config: { auth: 'tenant' }, schema: { tags, params: artifactParams } },
    async (request, reply) => {
      const path = request.params['*'];
      const artifact = await store.getArtifact(request.params.tenant, path);
      if (!artifact) throw artifactNotFound(path);
      void reply.header('etag', `"${artifact.sha256}"`);
      void reply.header('last-modified', new Date(artifact.updated_at).toUTCString());
      void reply.headers(artifactHeaders(path, artifact.content_type));
      if (etagMatches(request.headers['if-none-match'], artifact.sha256)) {
        return reply.code(304).send();
      }
      return reply
        .type(artifact.content_type)
        .send(
          Buffer.from(artifact.body.buffer, artifact.body.byteOffset, artifact.body.byteLength),
        );
    },
  );

  app.delete(
    '/v1/tenants/:tenant/artifacts/*',
    {
      config: { auth: 'tenant' },
      schema: { tags, params: artifactParams, response: { 200: deletedSchema } },
    },
    async (request) => {
      const path = request.params['*'];
      if (!(await store.deleteArtifact(request.params.tenant, path))) throw artifactNotFound(path);
      return { deleted: true as const };
    },
  );

  // PUT lives in its own encapsulation context: the raw parser below accepts every
  // content type, which must not leak to the JSON routes.
  void app.register(async (scoped: FastifyInstance) => {
    scoped.removeAllContentTypeParsers();
    scoped.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: deps.config.limits.artifact_bytes },
      (_request, body, done) => done(null, body),
    );
    scoped.withTypeProvider<ZodTypeProvider>().put(
      '/v1/tenants/:tenant/artifacts/*',
      {
        config: { auth: 'tenant', any_content_type: true },
        bodyLimit: deps.config.limits.artifact_bytes,
        schema: {
          tags,
          params: artifactParams,
          description:
            'Store the raw body under the path with its content type (any type); 201 new, 200 replaced.',
        },
      },
      async (request, reply) => {
        const path = request.params['*'];
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const { artifact, created } = await store.putArtifact(request.params.tenant, path, {
          body,
          content_type: contentTypeOf(request.headers['content-type']),
          metadata: {},
          max_bytes: deps.config.tenant_limits.artifact_bytes,
        });
        return reply.code(created ? 201 : 200).send({ artifact });
      },
    );
  });
}
