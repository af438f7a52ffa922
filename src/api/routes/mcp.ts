// A tenant's MCP servers and secrets (docs/mcp.md). Secret values go in and never come
// out: listings carry names and times only. A server body naming a command is refused
// before it is parsed: only the operator starts programs (keel.toml [mcp.stdio.*]).

import { z } from 'zod';
import { KeelError } from '../../errors.ts';
import type { McpService } from '../../mcp/service.ts';
import { effectOf } from '../../mcp/tool-specs.ts';
import { mcpToolName } from '../../mcp/names.ts';
import type { DiscoveredTool, McpServerSpec } from '../../mcp/server-spec.ts';
import {
  MCP_SERVER_NAME,
  SECRET_NAME,
  mcpServerBody,
  programKeys,
  secretValueSchema,
} from '../../mcp/server-spec.ts';
import type { McpServerStore, SecretStore } from '../../store/store.ts';
import type { McpServerRecord } from '../../store/shapes.ts';
import type { ApiDepsWith, ZodApp } from '../deps.ts';
import { deletedSchema, namedListQuery, nameSchema, tenantParams } from '../schemas.ts';
import { listPager } from '../page-budget.ts';

type Deps = ApiDepsWith<McpServerStore & SecretStore>;

/** `:tenant` and a `:name` that must match `pattern`. */
function namedParams(pattern: RegExp) {
  return z.strictObject({
    tenant: nameSchema,
    name: z.string().regex(pattern, { message: `must match ${pattern.source}` }),
  });
}
const serverParams = namedParams(MCP_SERVER_NAME);
const secretParams = namedParams(SECRET_NAME);
const secretBody = z.strictObject({ value: secretValueSchema });

function serverView(server: McpServerRecord) {
  const spec = server.spec as unknown as McpServerSpec;
  const tools = server.tools as unknown as DiscoveredTool[];
  return {
    name: server.name,
    enabled: spec.enabled,
    transport: spec.transport,
    allowed_tools: spec.allowed_tools ?? null,
    tools: tools.map((tool) => ({
      name: mcpToolName(server.name, tool.name),
      mcp_name: tool.name,
      description: tool.description,
      effect: effectOf(tool.annotations),
      allowed: !spec.allowed_tools || spec.allowed_tools.includes(tool.name),
    })),
    last_error: server.last_error,
    created_at: server.created_at,
    updated_at: server.updated_at,
  };
}

/** DELETE of one named item: `{ deleted: true }`, or `notFound` when there was none. */
function deleteRoute(
  app: ZodApp,
  url: string,
  schema: { tags: string[]; params: ReturnType<typeof namedParams> },
  remove: (tenant: string, name: string) => Promise<boolean>,
  notFound: (name: string) => KeelError,
): void {
  app.delete(
    url,
    { config: { auth: 'tenant' }, schema: { ...schema, response: { 200: deletedSchema } } },
    async (request) => {
      const { tenant, name } = request.params;
      if (!(await remove(tenant, name))) throw notFound(name);
      return { deleted: true as const };
    },
  );
}

export function secretRoutes(app: ZodApp, deps: Deps): void {
  const { store } = deps;
  const listPage = listPager(deps.config.tenant_limits.list_page_bytes);
  const tags = ['secrets'];
  app.get(
    '/v1/tenants/:tenant/secrets',
    {
      config: { auth: 'tenant' },
      schema: { tags, params: tenantParams, querystring: namedListQuery },
    },
    async (request) => {
      const page = await listPage(request.query, (size, after) =>
        store.listSecrets(request.params.tenant, size, after),
      );
      return { secrets: page.items, next_cursor: page.next_cursor };
    },
  );
  app.put(
    '/v1/tenants/:tenant/secrets/:name',
    { config: { auth: 'tenant' }, schema: { tags, params: secretParams, body: secretBody } },
    async (request, reply) => {
      const { tenant, name } = request.params;
      const { created } = await store.putSecret(
        tenant,
        name,
        request.body.value,
        deps.config.tenant_limits.secrets,
      );
      return reply.code(created ? 201 : 200).send({ name, created });
    },
  );
  deleteRoute(
    app,
    '/v1/tenants/:tenant/secrets/:name',
    { tags, params: secretParams },
    (tenant, name) => store.deleteSecret(tenant, name),
    (name) => new KeelError('SECRET_NOT_FOUND', `secret ${name} not found`),
  );
}

export function mcpRoutes(app: ZodApp, deps: Deps, mcp: McpService): void {
  const { store } = deps;
  const listPage = listPager(deps.config.tenant_limits.list_page_bytes);
  const tags = ['mcp'];
  app.get(
    '/v1/tenants/:tenant/mcp',
    {
      config: { auth: 'tenant' },
      schema: { tags, params: tenantParams, querystring: namedListQuery },
    },
    async (request) => {
      // The budget counts the records as stored; the views are smaller.
      const page = await listPage(request.query, (size, after) =>
        store.listMcpServersPage(request.params.tenant, size, after),
      );
      return { servers: page.items.map(serverView), next_cursor: page.next_cursor };
    },
  );
  app.get(
    '/v1/tenants/:tenant/mcp/:name',
    { config: { auth: 'tenant' }, schema: { tags, params: serverParams } },
    async (request) => {
      const { tenant, name } = request.params;
      const server = await store.getMcpServer(tenant, name);
      if (!server) throw new KeelError('MCP_SERVER_NOT_FOUND', `MCP server ${name} not found`);
      return serverView(server);
    },
  );
  app.put(
    '/v1/tenants/:tenant/mcp/:name',
    {
      config: { auth: 'tenant' },
      schema: { tags, params: serverParams, body: mcpServerBody },
      preValidation: async (request) => {
        const keys = programKeys(request.body);
        if (keys.length > 0) {
          throw new KeelError(
            'VALIDATION_FAILED',
            `${keys.join(', ')}: a tenant cannot give a command; stdio servers are declared by the operator in keel.toml [mcp.stdio.<name>] and attached by name`,
            { field: keys[0] },
          );
        }
      },
    },
    async (request, reply) => {
      const { tenant, name } = request.params;
      const { server, created } = await mcp.put(tenant, name, request.body);
      return reply.code(created ? 201 : 200).send(serverView(server));
    },
  );
  deleteRoute(
    app,
    '/v1/tenants/:tenant/mcp/:name',
    { tags, params: serverParams },
    (tenant, name) => mcp.delete(tenant, name),
    (name) => new KeelError('MCP_SERVER_NOT_FOUND', `MCP server ${name} not found`),
  );
}
