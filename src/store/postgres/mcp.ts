// A tenant's MCP servers and secrets (docs/mcp.md). Secret values are read only by
// getSecretValue; listings carry names and times.

import type { JsonObject } from '../../types.ts';
import type { McpServerRecord, SecretInfo } from '../shapes.ts';
import type { McpServerRow, SecretInfoRow } from '../rules/mcp.ts';
import { toMcpServer, toSecretInfo } from '../rules/mcp.ts';
import type { PgContext, Sql } from './context.ts';
import type { Page } from '../store.ts';
import { MCP_SERVER_LIST, SECRET_LIST } from '../rules/keyset.ts';
import { listByKey } from './keyset.ts';
import { requireTenant } from './guards.ts';
import { deleteNamedRow, refuseCreatePastQuota } from './named-rows.ts';
import { resourceChange } from '../rules/resource-changes.ts';

export async function putMcpServer(
  ctx: PgContext,
  tenant: string,
  name: string,
  record: { spec: JsonObject; tools: JsonObject[]; last_error: string | null },
  maxServers?: number,
): Promise<{ server: McpServerRecord; created: boolean }> {
  return ctx.write(async (tx) => {
    await requireTenant(tx, tenant);
    await refuseCreatePastQuota(tx, 'mcp_servers', tenant, name, maxServers);
    const values = [JSON.stringify(record.spec), JSON.stringify(record.tools), record.last_error];
    const inserted = await tx.one<McpServerRow>(
      `INSERT INTO mcp_servers (spec, tools, last_error, tenant, name, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (tenant, name) DO NOTHING RETURNING *`,
      [...values, tenant, name, tx.now],
    );
    tx.changes.push(resourceChange(tenant, 'mcp_server', name));
    if (inserted) return { server: toMcpServer(inserted), created: true };
    const updated = await tx.one<McpServerRow>(
      `UPDATE mcp_servers SET spec = $1, tools = $2, last_error = $3,
         updated_at = GREATEST($6, updated_at + 1)
       WHERE tenant = $4 AND name = $5 RETURNING *`,
      [...values, tenant, name, tx.now],
    );
    return { server: toMcpServer(updated as McpServerRow), created: false };
  });
}

export async function getMcpServer(
  sql: Sql,
  tenant: string,
  name: string,
): Promise<McpServerRecord | null> {
  const row = await sql.one<McpServerRow>(
    'SELECT * FROM mcp_servers WHERE tenant = $1 AND name = $2',
    [tenant, name],
  );
  return row ? toMcpServer(row) : null;
}

export async function listMcpServers(sql: Sql, tenant: string | null): Promise<McpServerRecord[]> {
  const rows =
    tenant === null
      ? await sql.rows<McpServerRow>('SELECT * FROM mcp_servers ORDER BY tenant, name')
      : await sql.rows<McpServerRow>('SELECT * FROM mcp_servers WHERE tenant = $1 ORDER BY name', [
          tenant,
        ]);
  return rows.map(toMcpServer);
}

export async function listMcpServersPage(
  sql: Sql,
  tenant: string,
  limit: number,
  cursor?: string,
): Promise<Page<McpServerRecord>> {
  return listByKey(
    sql,
    { ...MCP_SERVER_LIST, tenant, limit, cursor },
    toMcpServer,
    (row: McpServerRow) => row.name,
  );
}

export async function updateMcpServerDiscovery(
  ctx: PgContext,
  tenant: string,
  name: string,
  discovery: { tools?: JsonObject[]; last_error: string | null },
): Promise<boolean> {
  return ctx.write(async (tx) => {
    const tools = discovery.tools ? JSON.stringify(discovery.tools) : null;
    const changed = await tx.count(
      `UPDATE mcp_servers SET tools = COALESCE($1, tools), last_error = $2
       WHERE tenant = $3 AND name = $4`,
      [tools, discovery.last_error, tenant, name],
    );
    if (changed > 0) tx.changes.push(resourceChange(tenant, 'mcp_server', name));
    return changed > 0;
  });
}

export function deleteMcpServer(ctx: PgContext, tenant: string, name: string): Promise<boolean> {
  return deleteNamedRow(ctx, 'mcp_servers', tenant, name, 'mcp_server');
}

export async function putSecret(
  ctx: PgContext,
  tenant: string,
  name: string,
  value: string,
  maxSecrets?: number,
): Promise<{ created: boolean }> {
  return ctx.write(async (tx) => {
    await requireTenant(tx, tenant);
    await refuseCreatePastQuota(tx, 'tenant_secrets', tenant, name, maxSecrets);
    const row = await tx.one<{ created: boolean }>(
      `INSERT INTO tenant_secrets (tenant, name, value, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $4)
       ON CONFLICT (tenant, name) DO UPDATE
         SET value = EXCLUDED.value,
             updated_at = GREATEST(EXCLUDED.updated_at, tenant_secrets.updated_at + 1)
       RETURNING (xmax = 0) AS created`,
      [tenant, name, value, tx.now],
    );
    return { created: row?.created ?? false };
  });
}

export async function listSecrets(
  sql: Sql,
  tenant: string,
  limit: number,
  cursor?: string,
): Promise<Page<SecretInfo>> {
  return listByKey(
    sql,
    { ...SECRET_LIST, tenant, limit, cursor },
    toSecretInfo,
    (row: SecretInfoRow) => row.name,
  );
}

export async function getSecretValue(
  sql: Sql,
  tenant: string,
  name: string,
): Promise<string | null> {
  const row = await sql.one<{ value: string }>(
    'SELECT value FROM tenant_secrets WHERE tenant = $1 AND name = $2',
    [tenant, name],
  );
  return row?.value ?? null;
}

export function deleteSecret(ctx: PgContext, tenant: string, name: string): Promise<boolean> {
  return deleteNamedRow(ctx, 'tenant_secrets', tenant, name);
}
