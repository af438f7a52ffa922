// A tenant's WebAssembly tools (docs/wasm-tools.md): PUT checks the module and the
// manifest before anything is stored; GET lists manifests (never the module bytes).

import { z } from 'zod';
import { KeelError } from '../../errors.ts';
import type { WasmToolStore } from '../../store/store.ts';
import type { WasmToolInfo } from '../../store/shapes.ts';
import type { WasmManifest } from '../../wasm/manifest.ts';
import { WASM_TOOL_NAME, wasmToolBody, wasmToolName } from '../../wasm/manifest.ts';
import type { WasmService } from '../../wasm/service.ts';
import type { ApiDepsWith, ZodApp } from '../deps.ts';
import { deletedSchema, namedListQuery, nameSchema, tenantParams } from '../schemas.ts';
import { listPager } from '../page-budget.ts';

type Deps = ApiDepsWith<WasmToolStore>;

const toolParams = z.strictObject({
  tenant: nameSchema,
  name: z.string().regex(WASM_TOOL_NAME, { message: `must match ${WASM_TOOL_NAME.source}` }),
});

function toolView(info: WasmToolInfo) {
  const manifest = info.manifest as unknown as WasmManifest;
  return {
    name: info.name,
    tool: wasmToolName(info.name),
    ...manifest,
    module_bytes: info.module_bytes,
    sha256: info.sha256,
    created_at: info.created_at,
    updated_at: info.updated_at,
  };
}

function notFound(name: string): KeelError {
  return new KeelError('WASM_TOOL_NOT_FOUND', `WebAssembly tool ${name} not found`);
}

export function wasmToolRoutes(app: ZodApp, deps: Deps, wasm: WasmService): void {
  const { store } = deps;
  const listPage = listPager(deps.config.tenant_limits.list_page_bytes);
  const tags = ['wasm-tools'];
  app.get(
    '/v1/tenants/:tenant/wasm-tools',
    {
      config: { auth: 'tenant' },
      schema: { tags, params: tenantParams, querystring: namedListQuery },
    },
    async (request) => {
      const page = await listPage(request.query, (size, after) =>
        store.listWasmToolsPage(request.params.tenant, size, after),
      );
      return { tools: page.items.map(toolView), next_cursor: page.next_cursor };
    },
  );
  app.get(
    '/v1/tenants/:tenant/wasm-tools/:name',
    { config: { auth: 'tenant' }, schema: { tags, params: toolParams } },
    async (request) => {
      const { tenant, name } = request.params;
      const tool = await store.getWasmTool(tenant, name);
      if (!tool) throw notFound(name);
      const { module: _bytes, ...info } = tool;
      return toolView(info);
    },
  );
  app.put(
    '/v1/tenants/:tenant/wasm-tools/:name',
    { config: { auth: 'tenant' }, schema: { tags, params: toolParams, body: wasmToolBody } },
    async (request, reply) => {
      const { tenant, name } = request.params;
      const { tool, created } = await wasm.put(tenant, name, request.body);
      return reply.code(created ? 201 : 200).send(toolView(tool));
    },
  );
  app.delete(
    '/v1/tenants/:tenant/wasm-tools/:name',
    {
      config: { auth: 'tenant' },
      schema: { tags, params: toolParams, response: { 200: deletedSchema } },
    },
    async (request) => {
      const { tenant, name } = request.params;
      if (!(await store.deleteWasmTool(tenant, name))) throw notFound(name);
      return { deleted: true as const };
    },
  );
}
