// Tables of rows a tenant names itself (MCP servers, secrets, webhooks, WebAssembly tools),
// each keyed by (tenant, name). A closed list: the table name goes into SQL text, never a caller's string.
import type { CountQuota } from './tenant-fairness.ts';

export type NamedRowTable = 'mcp_servers' | 'tenant_secrets' | 'tenant_webhooks' | 'wasm_tools';

/**
 * Tables whose rows a count quota bounds: the named rows, agents and schedules, each
 * keyed by name.
 */
export type CountedTable = NamedRowTable | 'agents' | 'schedules';

/** The [tenant_limits] quota each counted table answers to. */
export const QUOTA_OF_TABLE: Readonly<Record<CountedTable, CountQuota>> = {
  agents: 'agents',
  mcp_servers: 'mcp_servers',
  tenant_secrets: 'secrets',
  tenant_webhooks: 'webhooks',
  wasm_tools: 'wasm_tools',
  schedules: 'schedules',
};
