// Rows of mcp_servers and tenant_secrets and their store shapes, for both backends.

import type { JsonObject } from '../../types.ts';
import { iso, parseJson } from '../rows.ts';
import type { McpServerRecord, SecretInfo } from '../shapes.ts';

export interface McpServerRow {
  tenant: string;
  name: string;
  spec: string;
  tools: string;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

export interface SecretInfoRow {
  name: string;
  created_at: number;
  updated_at: number;
}

export function toMcpServer(row: McpServerRow): McpServerRecord {
  return {
    tenant: row.tenant,
    name: row.name,
    spec: parseJson<JsonObject>(row.spec),
    tools: parseJson<JsonObject[]>(row.tools),
    last_error: row.last_error,
    created_at: iso(row.created_at),
    updated_at: iso(Number(row.updated_at)),
  };
}

export function toSecretInfo(row: SecretInfoRow): SecretInfo {
  return { name: row.name, created_at: iso(row.created_at), updated_at: iso(row.updated_at) };
}
