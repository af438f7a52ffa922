// The tools of one tenant: the process's built-ins plus the tools of the tenant's
// enabled MCP servers (as discovered, narrowed by each server's allowed_tools). Built per
// run attempt and for GET T/tools; compiled schemas are cached per server version.

import type { ValidateFunction } from 'ajv';
import type { McpServerStore } from '../store/store.ts';
import type { McpServerRecord } from '../store/shapes.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { createToolRegistry } from '../tools/registry.ts';
import type { AnyToolSpec } from '../tools/tool.ts';
import type { DiscoveredTool, McpServerSpec } from './server-spec.ts';
import type { McpSessions } from './sessions.ts';
import { mcpToolSpec } from './tool-specs.ts';

export type ToolsForTenant = (tenant: string) => Promise<ToolRegistry>;

export interface ToolCatalogDeps {
  builtins: ToolRegistry;
  store: Pick<McpServerStore, 'listMcpServers'>;
  sessions: McpSessions;
  compile: (schema: Record<string, unknown>) => ValidateFunction;
}

export function createToolCatalog(deps: ToolCatalogDeps): ToolsForTenant {
  const cache = new Map<string, { version: string; tools: AnyToolSpec[] }>();

  const toolsOf = (server: McpServerRecord): AnyToolSpec[] => {
    const id = `${server.tenant}\u0000${server.name}`;
    // A rediscovery replaces the tools without a new updated_at: both make the version.
    const version = `${server.updated_at} ${JSON.stringify(server.tools)}`;
    const cached = cache.get(id);
    if (cached?.version === version) return cached.tools;
    const spec = server.spec as unknown as McpServerSpec;
    const key = {
      tenant: server.tenant,
      server: server.name,
      version: server.updated_at,
      transport: spec.transport,
    };
    const tools: AnyToolSpec[] = [];
    for (const tool of server.tools as unknown as DiscoveredTool[]) {
      if (spec.allowed_tools && !spec.allowed_tools.includes(tool.name)) continue;
      try {
        tools.push(mcpToolSpec(key, tool, deps.compile(tool.input_schema), deps.sessions));
      } catch {
        // A schema checked at PUT that no longer compiles: the tool is left out.
      }
    }
    cache.set(id, { version, tools });
    return tools;
  };

  return async (tenant) => {
    const servers = await deps.store.listMcpServers(tenant);
    const enabled = servers.filter((server) => server.spec.enabled !== false);
    if (enabled.length === 0) return deps.builtins;
    const names = new Set(deps.builtins.all().map((tool) => tool.name));
    const extra: AnyToolSpec[] = [];
    for (const server of enabled) {
      for (const tool of toolsOf(server)) {
        // Collisions are refused at PUT; one that slipped through keeps the first.
        if (names.has(tool.name)) continue;
        names.add(tool.name);
        extra.push(tool);
      }
    }
    return createToolRegistry([...deps.builtins.all(), ...extra]);
  };
}
