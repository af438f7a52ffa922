// Tenants, their tokens and their agents.

import {
  agentDeletedError,
  checkIfUpdatedAt,
  requireTenantFound,
  tenantDeletedChanges,
  toTokenRecord,
  tokenValues,
} from '../rules/tenants.ts';
import type { TokenRow } from '../rules/tenants.ts';
import type { Agent, AgentSpec, JsonObject, Tenant, TokenRecord } from '../../types.ts';
import type { Page, TokenLookup } from '../store.ts';
import type { PgContext, Sql } from './context.ts';
import { requireTenant } from './guards.ts';
import { refuseCreatePastQuota } from './named-rows.ts';
import { failActiveRuns } from './run-writes.ts';
import type { AgentRow, TenantRow } from './rows.ts';
import { toAgent, toTenant } from './rows.ts';
import { disableSchedulesOfAgent } from './schedules.ts';
import { resourceChange } from '../rules/resource-changes.ts';
import { AGENT_LIST } from '../rules/keyset.ts';
import { listByKey } from './keyset.ts';

async function tenantRow(sql: Sql, name: string, lock = false): Promise<TenantRow | undefined> {
  return sql.one<TenantRow>(`SELECT * FROM tenants WHERE name = $1${lock ? ' FOR UPDATE' : ''}`, [
    name,
  ]);
}

export async function createTenant(
  ctx: PgContext,
  name: string,
  metadata: JsonObject,
): Promise<{ tenant: Tenant; created: boolean }> {
  return ctx.write(async (tx) => {
    const inserted = await tx.one<TenantRow>(
      `INSERT INTO tenants (name, metadata, created_at, updated_at) VALUES ($1, $2, $3, $3)
       ON CONFLICT (name) DO NOTHING RETURNING *`,
      [name, JSON.stringify(metadata), tx.now],
    );
    if (inserted) return { tenant: toTenant(inserted), created: true };
    return { tenant: toTenant((await tenantRow(tx, name)) as TenantRow), created: false };
  });
}

export async function getTenant(sql: Sql, name: string): Promise<Tenant | null> {
  const row = await tenantRow(sql, name);
  return row ? toTenant(row) : null;
}

export async function listTenants(sql: Sql): Promise<Tenant[]> {
  return (await sql.rows<TenantRow>('SELECT * FROM tenants ORDER BY name')).map(toTenant);
}

export async function updateTenant(
  ctx: PgContext,
  name: string,
  metadata: JsonObject,
  ifUpdatedAt: string | undefined,
): Promise<Tenant> {
  return ctx.write(async (tx) => {
    const row = await tenantRow(tx, name, true);
    checkIfUpdatedAt(requireTenantFound(row, name), name, ifUpdatedAt);
    // updated_at is the optimistic-concurrency token: it changes on every update.
    const updated = await tx.one<TenantRow>(
      `UPDATE tenants SET metadata = $1, updated_at = GREATEST($2, updated_at + 1)
       WHERE name = $3 RETURNING *`,
      [JSON.stringify(metadata), tx.now, name],
    );
    return toTenant(updated as TenantRow);
  });
}

export async function deleteTenant(ctx: PgContext, name: string): Promise<boolean> {
  return ctx.write(async (tx) => {
    if (!(await tenantRow(tx, name, true))) return false;
    const active = await tx.rows<{ run_id: string }>(
      "SELECT run_id FROM runs WHERE tenant = $1 AND status IN ('queued', 'running', 'waiting') FOR UPDATE",
      [name],
    );
    for (const table of ['approvals', 'deliveries', 'threads', 'tokens', 'agents']) {
      await tx.count(`DELETE FROM ${table} WHERE tenant = $1`, [name]);
    }
    await tx.count(
      'DELETE FROM run_entries WHERE run_id IN (SELECT run_id FROM runs WHERE tenant = $1)',
      [name],
    );
    await tx.count(
      'DELETE FROM run_events WHERE run_id IN (SELECT run_id FROM runs WHERE tenant = $1)',
      [name],
    );
    await tx.count('DELETE FROM runs WHERE tenant = $1', [name]);
    await tx.count('DELETE FROM tenants WHERE name = $1', [name]);
    // Its active runs end as cancelled: waiters and their workers must wake and stop.
    tx.changes.push(...tenantDeletedChanges(name, active));
    return true;
  });
}

export async function createToken(
  ctx: PgContext,
  token: TokenRecord & { hash: string },
): Promise<TokenRecord> {
  return ctx.write(async (tx) => {
    await requireTenant(tx, token.tenant);
    const row = await tx.one<TokenRow>(
      `INSERT INTO tokens (id, tenant, name, hash, created_at) VALUES ($1, $2, $3, $4, $5)
       RETURNING *`,
      tokenValues(token, tx.now),
    );
    return toTokenRecord(row as TokenRow);
  });
}

export async function listTokens(sql: Sql, tenant: string): Promise<TokenRecord[]> {
  const rows = await sql.rows<TokenRow>(
    'SELECT * FROM tokens WHERE tenant = $1 ORDER BY created_at, id',
    [tenant],
  );
  return rows.map(toTokenRecord);
}

export async function deleteToken(ctx: PgContext, tenant: string, id: string): Promise<boolean> {
  return ctx.write(
    async (tx) =>
      (await tx.count('DELETE FROM tokens WHERE tenant = $1 AND id = $2', [tenant, id])) > 0,
  );
}

export async function findToken(sql: Sql, id: string): Promise<TokenLookup | null> {
  const row = await sql.one<TokenLookup>('SELECT id, tenant, hash FROM tokens WHERE id = $1', [id]);
  return row ?? null;
}

async function agentRow(sql: Sql, tenant: string, name: string): Promise<AgentRow | undefined> {
  return sql.one<AgentRow>('SELECT * FROM agents WHERE tenant = $1 AND name = $2', [tenant, name]);
}

export async function getAgent(sql: Sql, tenant: string, name: string): Promise<Agent | null> {
  const row = await agentRow(sql, tenant, name);
  return row ? toAgent(row) : null;
}

export async function putAgent(
  ctx: PgContext,
  tenant: string,
  name: string,
  spec: AgentSpec,
  maxAgents?: number,
): Promise<{ agent: Agent; created: boolean }> {
  return ctx.write(async (tx) => {
    await requireTenant(tx, tenant);
    await refuseCreatePastQuota(tx, 'agents', tenant, name, maxAgents);
    const inserted = await tx.one<AgentRow>(
      `INSERT INTO agents (tenant, name, spec, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
       ON CONFLICT (tenant, name) DO NOTHING RETURNING *`,
      [tenant, name, JSON.stringify(spec), tx.now],
    );
    tx.changes.push(resourceChange(tenant, 'agent', name));
    if (inserted) return { agent: toAgent(inserted), created: true };
    const updated = await tx.one<AgentRow>(
      `UPDATE agents SET spec = $1, updated_at = GREATEST($2, updated_at + 1)
       WHERE tenant = $3 AND name = $4 RETURNING *`,
      [JSON.stringify(spec), tx.now, tenant, name],
    );
    return { agent: toAgent(updated as AgentRow), created: false };
  });
}

export async function listAgents(
  sql: Sql,
  tenant: string,
  limit: number,
  cursor?: string,
): Promise<Page<Agent>> {
  return listByKey(
    sql,
    { ...AGENT_LIST, tenant, limit, cursor },
    toAgent,
    (row: AgentRow) => row.name,
  );
}

export async function deleteAgent(ctx: PgContext, tenant: string, name: string): Promise<boolean> {
  return ctx.write(async (tx) => {
    const deleted =
      (await tx.count('DELETE FROM agents WHERE tenant = $1 AND name = $2', [tenant, name])) > 0;
    if (!deleted) return false;
    await failActiveRuns(tx, { tenant, agent: name }, agentDeletedError(name));
    await disableSchedulesOfAgent(tx, tenant, name);
    tx.changes.push(resourceChange(tenant, 'agent', name));
    return true;
  });
}
