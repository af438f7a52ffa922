// A tenant's MCP servers and secrets (docs/mcp.md), for both backends. Secret values
// are read only by getSecretValue; listings carry names and times.

import type { JsonObject } from '../../types.ts';
import type { McpServerRecord } from '../shapes.ts';
import type { McpServerRow } from '../rules/mcp.ts';
import { toMcpServer, toSecretInfo } from '../rules/mcp.ts';
import { MCP_SERVER_LIST, SECRET_LIST } from '../rules/keyset.ts';
import { resourceChange } from '../rules/resource-changes.ts';
import { sql } from '../sql/query.ts';
import type { Op, Reads, Writes } from '../sql/steps.ts';
import { requireTenant } from './guards.ts';
import { listByName } from './keyset.ts';
import { deleteNamedRow, refuseCreatePastQuota } from './named-rows.ts';
import { bumpedUpdatedAt, wasCreated } from './upsert.ts';

export function* putMcpServer(
  tx: Writes,
  tenant: string,
  name: string,
  record: { spec: JsonObject; tools: JsonObject[]; last_error: string | null },
  maxServers?: number,
): Op<{ server: McpServerRecord; created: boolean }> {
  yield* requireTenant(tx, tenant);
  yield* refuseCreatePastQuota(tx, 'mcp_servers', tenant, name, maxServers);
  const row = yield* tx.one<McpServerRow>(
    sql`INSERT INTO mcp_servers (spec, tools, last_error, tenant, name, created_at, updated_at)
        VALUES (${JSON.stringify(record.spec)}, ${JSON.stringify(record.tools)},
                ${record.last_error}, ${tenant}, ${name}, ${tx.now}, ${tx.now})
        ON CONFLICT (tenant, name) DO UPDATE
          SET spec = excluded.spec, tools = excluded.tools, last_error = excluded.last_error,
              updated_at = ${bumpedUpdatedAt(tx, 'mcp_servers')}
        RETURNING *`,
  );
  if (!row) throw new Error('mcp server row missing after write');
  tx.changes.push(resourceChange(tenant, 'mcp_server', name));
  return { server: toMcpServer(row), created: wasCreated(row) };
}

export function* getMcpServer(db: Reads, tenant: string, name: string): Op<McpServerRecord | null> {
  const row = yield* db.one<McpServerRow>(
    sql`SELECT * FROM mcp_servers WHERE tenant = ${tenant} AND name = ${name}`,
  );
  return row ? toMcpServer(row) : null;
}

/** A tenant's servers by name; null: every tenant's (the discovery refresher). */
export function* listMcpServers(db: Reads, tenant: string | null): Op<McpServerRecord[]> {
  const rows =
    tenant === null
      ? yield* db.rows<McpServerRow>(sql`SELECT * FROM mcp_servers ORDER BY tenant, name`)
      : yield* db.rows<McpServerRow>(
          sql`SELECT * FROM mcp_servers WHERE tenant = ${tenant} ORDER BY name`,
        );
  return rows.map(toMcpServer);
}

export function listMcpServersPage(db: Reads, tenant: string, limit: number, cursor?: string) {
  return listByName(db, MCP_SERVER_LIST, toMcpServer, { tenant, limit, cursor });
}

/** Records what discovery found (tools absent: keeps the last list); false: no such server. */
export function* updateMcpServerDiscovery(
  tx: Writes,
  tenant: string,
  name: string,
  discovery: { tools?: JsonObject[]; last_error: string | null },
): Op<boolean> {
  const tools = discovery.tools ? JSON.stringify(discovery.tools) : null;
  const changed = yield* tx.run(
    sql`UPDATE mcp_servers SET tools = COALESCE(${tools}, tools), last_error = ${discovery.last_error}
        WHERE tenant = ${tenant} AND name = ${name}`,
  );
  if (changed > 0) tx.changes.push(resourceChange(tenant, 'mcp_server', name));
  return changed > 0;
}

export function deleteMcpServer(tx: Writes, tenant: string, name: string): Op<boolean> {
  return deleteNamedRow(tx, 'mcp_servers', tenant, name, 'mcp_server');
}

export function* putSecret(
  tx: Writes,
  tenant: string,
  name: string,
  value: string,
  maxSecrets?: number,
): Op<{ created: boolean }> {
  yield* requireTenant(tx, tenant);
  yield* refuseCreatePastQuota(tx, 'tenant_secrets', tenant, name, maxSecrets);
  const row = yield* tx.one<{ created_at: number; updated_at: number }>(
    sql`INSERT INTO tenant_secrets (tenant, name, value, created_at, updated_at)
        VALUES (${tenant}, ${name}, ${value}, ${tx.now}, ${tx.now})
        ON CONFLICT (tenant, name) DO UPDATE
          SET value = excluded.value, updated_at = ${bumpedUpdatedAt(tx, 'tenant_secrets')}
        RETURNING created_at, updated_at`,
  );
  return { created: row ? wasCreated(row) : false };
}

export function listSecrets(db: Reads, tenant: string, limit: number, cursor?: string) {
  return listByName(db, SECRET_LIST, toSecretInfo, { tenant, limit, cursor });
}

export function* getSecretValue(db: Reads, tenant: string, name: string): Op<string | null> {
  const row = yield* db.one<{ value: string }>(
    sql`SELECT value FROM tenant_secrets WHERE tenant = ${tenant} AND name = ${name}`,
  );
  return row?.value ?? null;
}

export function deleteSecret(tx: Writes, tenant: string, name: string): Op<boolean> {
  return deleteNamedRow(tx, 'tenant_secrets', tenant, name);
}
