// A tenant's tools with its WebAssembly tools added (`wasm_<name>`, family `wasm`) to
// whatever the base catalog gives (built-ins + MCP tools). Built per run attempt and for
// GET T/tools; a tool's spec is cached per version (sha256 + updated_at).

import type { ValidateFunction } from 'ajv';
import type { ToolsForTenant } from '../mcp/catalog.ts';
import type { WasmToolStore } from '../store/store.ts';
import type { WasmToolInfo } from '../store/shapes.ts';
import { createToolRegistry } from '../tools/registry.ts';
import type { AnyToolSpec } from '../tools/tool.ts';
import type { WasmRunner } from './tool-specs.ts';
import { wasmToolSpec } from './tool-specs.ts';

export interface WasmCatalogDeps {
  store: Pick<WasmToolStore, 'listWasmTools'>;
  runner: WasmRunner;
  compile: (schema: Record<string, unknown>) => ValidateFunction;
}

export function withWasmTools(base: ToolsForTenant, deps: WasmCatalogDeps): ToolsForTenant {
  const cache = new Map<string, { version: string; tool: AnyToolSpec | null }>();
  const specOf = (info: WasmToolInfo): AnyToolSpec | null => {
    const id = `${info.tenant}\u0000${info.name}`;
    const version = `${info.sha256} ${info.updated_at}`;
    const cached = cache.get(id);
    if (cached?.version === version) return cached.tool;
    let tool: AnyToolSpec | null = null;
    try {
      tool = wasmToolSpec(
        info,
        deps.compile(info.manifest.input_schema as Record<string, unknown>),
        deps.runner,
      );
    } catch {
      // A schema checked at PUT that no longer compiles: the tool is left out.
    }
    cache.set(id, { version, tool });
    return tool;
  };
  return async (tenant) => {
    const [registry, infos] = await Promise.all([base(tenant), deps.store.listWasmTools(tenant)]);
    if (infos.length === 0) return registry;
    const names = new Set(registry.all().map((tool) => tool.name));
    const extra = infos
      .map(specOf)
      .filter((tool): tool is AnyToolSpec => tool !== null && !names.has(tool.name));
    return createToolRegistry([...registry.all(), ...extra]);
  };
}
