// How /openapi.json is made: @fastify/swagger walks the routes, and these transforms turn
// each route's zod schemas (the ones that validate its requests) into OpenAPI 3.1 with
// its documented success answers (./responses.ts), its error answers (./route-errors.ts),
// its security (from `config.auth`), a summary, an operationId and examples.

import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import { createJsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import type { ZodType } from 'zod';
import { errorResponses } from './route-errors.ts';
import { REQUEST_EXAMPLES, RESPONSE_EXAMPLES, SUMMARIES } from './examples.ts';
import type { DocumentedResponse, RawResponse } from './responses.ts';
import { DOCUMENTED_RESPONSES } from './responses.ts';

type Transform = NonNullable<FastifyDynamicSwaggerOptions['transform']>;
type TransformObject = NonNullable<FastifyDynamicSwaggerOptions['transformObject']>;
type JsonObject = Record<string, unknown>;

/** The `METHOD url` key of a route, as in DOCUMENTED_RESPONSES. */
export function routeKey(method: string, url: string): string {
  return `${method.toUpperCase()} ${url}`;
}

/** `/v1/tenants/:tenant/artifacts/*` → `/v1/tenants/{tenant}/artifacts/{path}`. */
export function openapiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, '{path}');
}

/** Routes whose body is not JSON (their own parser): the documented media types. */
const RAW_REQUEST_BODIES: Record<string, { consumes: string[]; schema: JsonObject }> = {
  'PUT /v1/tenants/:tenant/artifacts/*': {
    consumes: ['*/*'],
    schema: {
      type: 'string',
      format: 'binary',
      description: 'the artifact bytes; the content-type header is stored with them',
    },
  },
};

function isRaw(response: DocumentedResponse): response is RawResponse {
  return (response as RawResponse).raw === true;
}

function rawToSwagger(response: RawResponse): JsonObject {
  if (Object.keys(response.content).length === 0) {
    return { description: response.description, type: 'null' };
  }
  return { description: response.description, content: response.content };
}

function pascal(word: string): string {
  return word
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part.length > 0)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');
}

/** getTenantAgentsByAgent for GET /v1/tenants/:tenant/agents/:agent; unique per route. */
export function operationIdOf(method: string, url: string): string {
  let segments = url.split('/').filter((segment) => segment.length > 0 && segment !== 'v1');
  let prefix = '';
  if (segments[0] === 'tenants' && segments[1] === ':tenant' && segments.length > 2) {
    prefix = 'Tenant';
    segments = segments.slice(2);
  }
  const words = segments.map((segment) => {
    if (segment === '*') return 'ByPath';
    if (segment.startsWith(':')) return `By${pascal(segment.slice(1))}`;
    return pascal(segment);
  });
  return `${method.toLowerCase()}${prefix}${words.join('')}`;
}

function securityOf(auth: string | undefined): Array<Record<string, string[]>> {
  if (auth === 'open') return [];
  if (auth === 'tenant') return [{ adminToken: [] }, { tenantToken: [] }];
  return [{ adminToken: [] }];
}

interface RouteLike {
  method: string | string[];
  url: string;
  config?: { auth?: string };
}

export function createOpenApiTransform(): Transform {
  const zodTransform = createJsonSchemaTransform({});
  return (input) => {
    const { schema, url } = input;
    const route = (input as unknown as { route: RouteLike }).route;
    if (!schema || (schema as { hide?: boolean }).hide) return zodTransform(input);
    const method = Array.isArray(route.method) ? route.method[0]! : route.method;
    const key = routeKey(method, route.url);
    const documented = DOCUMENTED_RESPONSES[key] ?? {};
    const declared = (schema as { response?: Record<string, ZodType> }).response;
    const zodResponses: Record<string, ZodType> = { ...declared };
    const rawResponses: Record<string, JsonObject> = {};
    if (!declared) {
      for (const [status, response] of Object.entries(documented)) {
        if (isRaw(response)) rawResponses[status] = rawToSwagger(response);
        else zodResponses[status] = response;
      }
    }
    const out = zodTransform({
      ...input,
      schema: { ...schema, response: zodResponses },
    } as Parameters<Transform>[0]);
    const transformed = out.schema as JsonObject & {
      response?: Record<string, JsonObject>;
      body?: JsonObject;
      description?: string;
      summary?: string;
    };
    const responses: Record<string, JsonObject> = { ...transformed.response, ...rawResponses };
    for (const [status, example] of Object.entries(RESPONSE_EXAMPLES[key] ?? {})) {
      if (responses[status]) responses[status] = { ...responses[status], examples: [example] };
    }
    const hasBody = Boolean((schema as { body?: unknown }).body);
    const hasInput = hasBody || Boolean((schema as { querystring?: unknown }).querystring);
    Object.assign(
      responses,
      errorResponses({
        key,
        method: method.toUpperCase(),
        url: route.url,
        auth: route.config?.auth,
        hasBody,
        hasInput,
      }),
    );
    const requestExample = REQUEST_EXAMPLES[key];
    const rawBody = RAW_REQUEST_BODIES[key];
    const body = rawBody
      ? rawBody.schema
      : transformed.body && requestExample !== undefined
        ? { ...transformed.body, examples: [requestExample] }
        : transformed.body;
    return {
      url,
      schema: {
        ...transformed,
        ...(body && { body }),
        ...(rawBody && { consumes: rawBody.consumes }),
        response: responses,
        summary: transformed.summary ?? SUMMARIES[key] ?? `${method} ${openapiPath(route.url)}`,
        operationId: operationIdOf(method, route.url),
        security: securityOf(route.config?.auth),
      },
    };
  };
}

/** Renames fastify's wildcard parameter `*` to `path` (a name OpenAPI tools accept). */
function renameWildcard(paths: Record<string, Record<string, JsonObject>>): void {
  for (const path of Object.keys(paths)) {
    if (!path.includes('{*}')) continue;
    const item = paths[path]!;
    for (const operation of Object.values(item)) {
      const parameters = operation.parameters as Array<JsonObject> | undefined;
      for (const parameter of parameters ?? []) {
        if (parameter.in === 'path' && parameter.name === '*') {
          parameter.name = 'path';
          parameter.description = 'the artifact path (may contain /)';
        }
      }
    }
    delete paths[path];
    paths[path.replace('{*}', '{path}')] = item;
  }
}

const SHARED_REF = '#/components/schemas/__shared#/$defs/';

/** zod's z.json(): a self-referencing anyOf of every JSON type, i.e. any value. */
function isAnyJson(name: string, schema: unknown): boolean {
  const self = { $ref: `#/components/schemas/${name}` };
  return (
    JSON.stringify(schema) ===
    JSON.stringify({
      anyOf: [
        { type: 'string' },
        { type: 'number' },
        { type: 'boolean' },
        { type: 'null' },
        { type: 'array', items: self },
        { type: 'object', propertyNames: { type: 'string' }, additionalProperties: self },
      ],
    })
  );
}

/**
 * References to z.json() components become `{}` (any value): the same meaning, and
 * generated TypeScript types cannot recurse through an index access.
 */
function inlineAnyJson(document: JsonObject): JsonObject {
  const schemas = (document.components as { schemas?: JsonObject } | undefined)?.schemas ?? {};
  const anyJson = new Set(
    Object.keys(schemas)
      .filter((name) => isAnyJson(name, schemas[name]))
      .map((name) => `#/components/schemas/${name}`),
  );
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (value === null || typeof value !== 'object') return value;
    const object = value as JsonObject;
    if (typeof object.$ref === 'string' && anyJson.has(object.$ref)) {
      const { $ref: _ref, ...rest } = object;
      return walk(rest);
    }
    return Object.fromEntries(Object.entries(object).map(([key, item]) => [key, walk(item)]));
  };
  return walk(document) as JsonObject;
}

/**
 * zod puts recursive helpers under a `__shared` component and refers into it; those are
 * hoisted to plain components, and components nothing refers to are dropped.
 */
function tidyComponents(document: JsonObject & { components?: { schemas?: JsonObject } }): void {
  const schemas = document.components?.schemas;
  if (!schemas) return;
  const shared = (schemas.__shared as { $defs?: JsonObject } | undefined)?.$defs ?? {};
  delete schemas.__shared;
  Object.assign(schemas, shared);
  let text = JSON.stringify(document).replaceAll(SHARED_REF, '#/components/schemas/');
  text = JSON.stringify(inlineAnyJson(JSON.parse(text) as JsonObject));
  for (;;) {
    const parsed = JSON.parse(text) as typeof document;
    const names = Object.keys(parsed.components!.schemas!);
    const unused = names.filter((name) => !text.includes(`"#/components/schemas/${name}"`));
    if (unused.length === 0) break;
    for (const name of unused) delete parsed.components!.schemas![name];
    text = JSON.stringify(parsed);
  }
  const tidy = JSON.parse(text) as typeof document;
  for (const key of Object.keys(document)) delete document[key];
  Object.assign(document, tidy);
}

export function createOpenApiTransformObject(): TransformObject {
  return (input) => {
    const document = jsonSchemaTransformObject(input) as JsonObject & {
      paths?: Record<string, Record<string, JsonObject>>;
    };
    if (document.paths) renameWildcard(document.paths);
    tidyComponents(document);
    return document as ReturnType<TransformObject>;
  };
}

/** The static parts of the document (the paths come from the routes). */
export function openApiBase(): NonNullable<FastifyDynamicSwaggerOptions['openapi']> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'keel HTTP API',
      description:
        'A durable runtime for personal AI agents (docs/http-api.md). Every error answers ' +
        '{error: {code, message, request_id}} with a code of the catalogue. Without an admin ' +
        'token (loopback only) no bearer token is needed.',
      version: '1',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: 'http://127.0.0.1:8080', description: 'keel serve on its default listen' }],
    components: {
      securitySchemes: {
        adminToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'the admin token (KEEL_ADMIN_TOKEN): reaches every route',
        },
        tenantToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'a tenant token (keel_<id>_<secret>): only /v1/tenants/{its tenant}/*',
        },
      },
    },
  };
}
