// What the MCP routes do (docs/mcp.md): attach or register a tenant's server — checked,
// and when enabled connected and listed first, so a failing server stores nothing —
// and rediscover every server at startup (a failure is `last_error`, never fatal).

import type { ValidateFunction } from 'ajv';
import { KeelError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { McpServerStore, SecretStore } from '../store/store.ts';
import type { McpServerRecord } from '../store/shapes.ts';
import type { JsonObject } from '../types.ts';
import type { ConnectDeps } from './connect.ts';
import { checkTransport, openClient } from './connect.ts';
import { checkDiscovered, listServerTools } from './discovery.ts';
import { mcpToolName } from './names.ts';
import type { DiscoveredTool, McpServerSpec } from './server-spec.ts';
import type { McpSessions } from './sessions.ts';

/** How long an enabled PUT (or a rediscovery) may take to connect and list tools. */
const DISCOVERY_TIMEOUT_MS = 30_000;

export interface McpServiceDeps extends ConnectDeps {
  store: McpServerStore & Pick<SecretStore, 'getSecretValue'>;
  sessions: McpSessions;
  compile: (schema: Record<string, unknown>) => ValidateFunction;
  logger: Logger;
  /** tenant_limits.mcp_servers: a create past it is 403 QUOTA_EXCEEDED. */
  maxServers: number;
  /** Counts rediscovery failures (keel_mcp_discovery_failures_total). */
  onDiscoveryFailure?: () => void;
}

export interface McpService {
  put(
    tenant: string,
    name: string,
    spec: McpServerSpec,
  ): Promise<{ server: McpServerRecord; created: boolean }>;
  delete(tenant: string, name: string): Promise<boolean>;
  rediscoverAll(): Promise<void>;
}

async function discover(
  deps: McpServiceDeps,
  tenant: string,
  spec: McpServerSpec,
): Promise<DiscoveredTool[]> {
  const signal = AbortSignal.timeout(DISCOVERY_TIMEOUT_MS);
  let opened;
  try {
    opened = await openClient(deps, tenant, spec.transport, signal);
  } catch (error) {
    if (error instanceof KeelError) throw error;
    throw new KeelError('MCP_SERVER_FAILED', `the MCP server failed: ${(error as Error).message}`);
  }
  try {
    return await listServerTools(opened.client, signal);
  } catch (error) {
    throw new KeelError(
      'MCP_SERVER_FAILED',
      `the MCP server could not list its tools: ${opened.scrub((error as Error).message)}`,
    );
  } finally {
    await opened.client.close().catch(() => undefined);
  }
}

export function createMcpService(deps: McpServiceDeps): McpService {
  return {
    async put(tenant, name, spec) {
      await checkTransport(deps, tenant, spec.transport);
      let tools: DiscoveredTool[] = [];
      if (spec.enabled) {
        tools = await discover(deps, tenant, spec);
        const others = new Set<string>();
        for (const server of await deps.store.listMcpServers(tenant)) {
          if (server.name === name) continue;
          for (const tool of server.tools as unknown as DiscoveredTool[]) {
            others.add(mcpToolName(server.name, tool.name));
          }
        }
        checkDiscovered(name, tools, spec.allowed_tools, others, deps.compile);
      } else {
        const existing = await deps.store.getMcpServer(tenant, name);
        tools = (existing?.tools ?? []) as unknown as DiscoveredTool[];
      }
      const stored = await deps.store.putMcpServer(
        tenant,
        name,
        {
          spec: spec as unknown as JsonObject,
          tools: tools as unknown as JsonObject[],
          last_error: null,
        },
        deps.maxServers,
      );
      await deps.sessions.close(tenant, name);
      return stored;
    },
    async delete(tenant, name) {
      const deleted = await deps.store.deleteMcpServer(tenant, name);
      await deps.sessions.close(tenant, name);
      return deleted;
    },
    async rediscoverAll() {
      for (const server of await deps.store.listAllMcpServers()) {
        const spec = server.spec as unknown as McpServerSpec;
        if (spec.enabled === false) continue;
        try {
          const tools = await discover(deps, server.tenant, spec);
          await deps.store.updateMcpServerDiscovery(server.tenant, server.name, {
            tools: tools as unknown as JsonObject[],
            last_error: null,
          });
        } catch (error) {
          const message = (error as Error).message;
          deps.onDiscoveryFailure?.();
          deps.logger.warn(
            { tenant: server.tenant, mcp_server: server.name, error: message },
            'MCP server rediscovery failed',
          );
          await deps.store
            .updateMcpServerDiscovery(server.tenant, server.name, { last_error: message })
            .catch(() => undefined);
        }
      }
    },
  };
}
