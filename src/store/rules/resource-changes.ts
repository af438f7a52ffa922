// `resource.changed`: the change every backend records, inside the writing transaction,
// when an agent, schedule, delivery, MCP server or WebAssembly tool of a tenant is
// written or removed. Like run changes it reaches this process's listeners after the
// commit and, on PostgreSQL, other processes through NOTIFY; only the tenant, the kind
// of thing and its name travel (the console's lists re-read through the ordinary routes).

import type { ChangedResource, StoreChange } from '../store.ts';

export const CHANGED_RESOURCES: readonly ChangedResource[] = [
  'agent',
  'schedule',
  'delivery',
  'mcp_server',
  'wasm_tool',
];

/** The name of a delivery change made by a claim round, which may touch several. */
export const CLAIM_ROUND = '';

export function resourceChange(
  tenant: string,
  resource: ChangedResource,
  name: string,
): StoreChange {
  return { kind: 'resource.changed', tenant, run_id: null, resource, name };
}

export function isChangedResource(value: unknown): value is ChangedResource {
  return CHANGED_RESOURCES.includes(value as ChangedResource);
}
