// A tenant's MCP servers and secrets (docs/mcp.md). Secret values are read only by
// getSecretValue; listings carry names and times.

import type { JsonObject } from '../../types.ts';
import type { McpServerRecord, SecretInfo } from '../shapes.ts';
import type { McpServerRow, SecretInfoRow } from '../rules/mcp.ts';
import { toMcpServer, toSecretInfo } from '../rules/mcp.ts';
import type { StoreContext } from './context.ts';
import type { Page } from '../store.ts';
import { MCP_SERVER_LIST, SECRET_LIST } from '../rules/keyset.ts';
import { listByKey } from './keyset.ts';
import { requireTenant } from './guards.ts';
import { deleteNamedRow, refuseCreatePastQuota } from './named-rows.ts';
import { resourceChange } from '../rules/resource-changes.ts';

function serverRow(ctx: StoreContext, tenant: string, name: string): McpServerRow | undefined {
  return ctx.sql('SELECT * FROM mcp_servers WHERE tenant = ? AND name = ?').get(tenant, name) as
    McpServerRow | undefined;
}

export function putMcpServer(
  ctx: StoreContext,
  tenant: string,
  name: string,
  record: { spec: JsonObject; tools: JsonObject[]; last_error: string | null },
  maxServers?: number,
): { server: McpServerRecord; created: boolean } {
  return ctx.write((changes) => {
    requireTenant(ctx, tenant);
    refuseCreatePastQuota(ctx, 'mcp_servers', tenant, name, maxServers);
    const existing = serverRow(ctx, tenant, name);
    const now = ctx.now();
    const values = [JSON.stringify(record.spec), JSON.stringify(record.tools), record.last_error];
    if (existing) {
      ctx
        .sql(
          `UPDATE mcp_servers SET spec = ?, tools = ?, last_error = ?, updated_at = ?
           WHERE tenant = ? AND name = ?`,
        )
        .run(...values, Math.max(now, existing.updated_at + 1), tenant, name);
    } else {
      ctx
        .sql(
          `INSERT INTO mcp_servers (spec, tools, last_error, tenant, name, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(...values, tenant, name, now, now);
    }
    changes.push(resourceChange(tenant, 'mcp_server', name));
    return {
      server: toMcpServer(serverRow(ctx, tenant, name) as McpServerRow),
      created: !existing,
    };
  });
}

export function getMcpServer(
  ctx: StoreContext,
  tenant: string,
  name: string,
): McpServerRecord | null {
  const row = serverRow(ctx, tenant, name);
  return row ? toMcpServer(row) : null;
}

export function listMcpServers(ctx: StoreContext, tenant: string | null): McpServerRecord[] {
  const rows = (
    tenant === null
      ? ctx.sql('SELECT * FROM mcp_servers ORDER BY tenant, name').all()
      : ctx.sql('SELECT * FROM mcp_servers WHERE tenant = ? ORDER BY name').all(tenant)
  ) as McpServerRow[];
  return rows.map(toMcpServer);
}

export function listMcpServersPage(
  ctx: StoreContext,
  tenant: string,
  limit: number,
  cursor?: string,
): Page<McpServerRecord> {
  return listByKey(
    ctx,
    { ...MCP_SERVER_LIST, tenant, limit, cursor },
    toMcpServer,
    (row: McpServerRow) => row.name,
  );
}

export function updateMcpServerDiscovery(
  ctx: StoreContext,
  tenant: string,
  name: string,
  discovery: { tools?: JsonObject[]; last_error: string | null },
): boolean {
  return ctx.write((changes) => {
    const existing = serverRow(ctx, tenant, name);
    if (!existing) return false;
    const tools = discovery.tools ? JSON.stringify(discovery.tools) : existing.tools;
    ctx
      .sql('UPDATE mcp_servers SET tools = ?, last_error = ? WHERE tenant = ? AND name = ?')
      .run(tools, discovery.last_error, tenant, name);
    changes.push(resourceChange(tenant, 'mcp_server', name));
    return true;
  });
}

export function deleteMcpServer(ctx: StoreContext, tenant: string, name: string): boolean {
  return deleteNamedRow(ctx, 'mcp_servers', tenant, name, 'mcp_server');
}

export function putSecret(
  ctx: StoreContext,
  tenant: string,
  name: string,
  value: string,
  maxSecrets?: number,
): { created: boolean } {
  return ctx.write(() => {
    requireTenant(ctx, tenant);
    refuseCreatePastQuota(ctx, 'tenant_secrets', tenant, name, maxSecrets);
    const now = ctx.now();
    const updated = ctx
      .sql(
        `UPDATE tenant_secrets SET value = ?, updated_at = MAX(?, updated_at + 1)
         WHERE tenant = ? AND name = ?`,
      )
      .run(value, now, tenant, name).changes;
    if (updated > 0) return { created: false };
    ctx
      .sql(
        `INSERT INTO tenant_secrets (tenant, name, value, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?)`,
      )
      .run(tenant, name, value, now, now);
    return { created: true };
  });
}

export function listSecrets(
  ctx: StoreContext,
  tenant: string,
  limit: number,
  cursor?: string,
): Page<SecretInfo> {
  return listByKey(
    ctx,
    { ...SECRET_LIST, tenant, limit, cursor },
    toSecretInfo,
    (row: SecretInfoRow) => row.name,
  );
}

export function getSecretValue(ctx: StoreContext, tenant: string, name: string): string | null {
  const row = ctx
    .sql('SELECT value FROM tenant_secrets WHERE tenant = ? AND name = ?')
    .get(tenant, name) as { value: string } | undefined;
  return row?.value ?? null;
}

export function deleteSecret(ctx: StoreContext, tenant: string, name: string): boolean {
  return deleteNamedRow(ctx, 'tenant_secrets', tenant, name);
}
