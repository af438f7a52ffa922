// Tenants, their tokens and their agents.

import {
  agentDeletedError,
  checkIfUpdatedAt,
  tenantDeletedChanges,
  toTokenRecord,
  tokenValues,
} from '../rules/tenants.ts';
import type { TokenRow } from '../rules/tenants.ts';
import type { Agent, AgentSpec, JsonObject, Tenant, TokenRecord } from '../../types.ts';
import type { Page, StoreChange, TokenLookup } from '../store.ts';
import type { StoreContext } from './context.ts';
import { failActiveRuns } from './run-writes.ts';
import type { AgentRow, TenantRow } from './rows.ts';
import { toAgent, toTenant } from './rows.ts';
import { requireTenant, tenantRow } from './guards.ts';
import { refuseCreatePastQuota } from './named-rows.ts';
import { disableSchedulesOfAgent } from './schedules.ts';
import { resourceChange } from '../rules/resource-changes.ts';
import { AGENT_LIST } from '../rules/keyset.ts';
import { listByKey } from './keyset.ts';

export function createTenant(
  ctx: StoreContext,
  name: string,
  metadata: JsonObject,
): { tenant: Tenant; created: boolean } {
  return ctx.write(() => {
    const existing = tenantRow(ctx, name);
    if (existing) return { tenant: toTenant(existing), created: false };
    const now = ctx.now();
    ctx
      .sql('INSERT INTO tenants (name, metadata, created_at, updated_at) VALUES (?, ?, ?, ?)')
      .run(name, JSON.stringify(metadata), now, now);
    return { tenant: toTenant(requireTenant(ctx, name)), created: true };
  });
}

export function getTenant(ctx: StoreContext, name: string): Tenant | null {
  const row = tenantRow(ctx, name);
  return row ? toTenant(row) : null;
}

export function listTenants(ctx: StoreContext): Tenant[] {
  return (ctx.sql('SELECT * FROM tenants ORDER BY name').all() as TenantRow[]).map(toTenant);
}

export function updateTenant(
  ctx: StoreContext,
  name: string,
  metadata: JsonObject,
  ifUpdatedAt: string | undefined,
): Tenant {
  return ctx.write(() => {
    const row = requireTenant(ctx, name);
    checkIfUpdatedAt(row, name, ifUpdatedAt);
    // updated_at is the optimistic-concurrency token, so it must change on every update,
    // even two within one millisecond.
    const updatedAt = Math.max(ctx.now(), row.updated_at + 1);
    ctx
      .sql('UPDATE tenants SET metadata = ?, updated_at = ? WHERE name = ?')
      .run(JSON.stringify(metadata), updatedAt, name);
    return toTenant(requireTenant(ctx, name));
  });
}

export function deleteTenant(ctx: StoreContext, name: string): boolean {
  return ctx.write((changes: StoreChange[]) => {
    if (!tenantRow(ctx, name)) return false;
    const active = ctx
      .sql(
        "SELECT run_id FROM runs WHERE tenant = ? AND status IN ('queued', 'running', 'waiting')",
      )
      .all(name) as { run_id: string }[];
    // Children first, so the result does not depend on foreign-key cascades.
    for (const table of ['approvals', 'deliveries', 'threads', 'tokens', 'agents']) {
      ctx.sql(`DELETE FROM ${table} WHERE tenant = ?`).run(name);
    }
    ctx
      .sql('DELETE FROM run_entries WHERE run_id IN (SELECT run_id FROM runs WHERE tenant = ?)')
      .run(name);
    ctx
      .sql('DELETE FROM run_events WHERE run_id IN (SELECT run_id FROM runs WHERE tenant = ?)')
      .run(name);
    ctx.sql('DELETE FROM runs WHERE tenant = ?').run(name);
    ctx.sql('DELETE FROM tenants WHERE name = ?').run(name);
    // Its active runs end as cancelled: waiters and their workers must wake and stop.
    changes.push(...tenantDeletedChanges(name, active));
    return true;
  });
}

export function createToken(ctx: StoreContext, token: TokenRecord & { hash: string }): TokenRecord {
  return ctx.write(() => {
    requireTenant(ctx, token.tenant);
    ctx
      .sql('INSERT INTO tokens (id, tenant, name, hash, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(...tokenValues(token, ctx.now()));
    return toTokenRecord(ctx.sql('SELECT * FROM tokens WHERE id = ?').get(token.id) as TokenRow);
  });
}

export function listTokens(ctx: StoreContext, tenant: string): TokenRecord[] {
  const rows = ctx
    .sql('SELECT * FROM tokens WHERE tenant = ? ORDER BY created_at, id')
    .all(tenant) as TokenRow[];
  return rows.map(toTokenRecord);
}

export function deleteToken(ctx: StoreContext, tenant: string, id: string): boolean {
  return ctx.write(
    () => ctx.sql('DELETE FROM tokens WHERE tenant = ? AND id = ?').run(tenant, id).changes > 0,
  );
}

export function findToken(ctx: StoreContext, id: string): TokenLookup | null {
  const row = ctx.sql('SELECT id, tenant, hash FROM tokens WHERE id = ?').get(id) as
    TokenLookup | undefined;
  return row ?? null;
}

function agentRow(ctx: StoreContext, tenant: string, name: string): AgentRow | undefined {
  return ctx.sql('SELECT * FROM agents WHERE tenant = ? AND name = ?').get(tenant, name) as
    AgentRow | undefined;
}

export function getAgent(ctx: StoreContext, tenant: string, name: string): Agent | null {
  const row = agentRow(ctx, tenant, name);
  return row ? toAgent(row) : null;
}

export function putAgent(
  ctx: StoreContext,
  tenant: string,
  name: string,
  spec: AgentSpec,
  maxAgents?: number,
): { agent: Agent; created: boolean } {
  return ctx.write((changes) => {
    requireTenant(ctx, tenant);
    refuseCreatePastQuota(ctx, 'agents', tenant, name, maxAgents);
    const existing = agentRow(ctx, tenant, name);
    const now = ctx.now();
    if (existing) {
      ctx
        .sql('UPDATE agents SET spec = ?, updated_at = ? WHERE tenant = ? AND name = ?')
        .run(JSON.stringify(spec), Math.max(now, existing.updated_at + 1), tenant, name);
    } else {
      ctx
        .sql(
          'INSERT INTO agents (tenant, name, spec, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
        )
        .run(tenant, name, JSON.stringify(spec), now, now);
    }
    changes.push(resourceChange(tenant, 'agent', name));
    return { agent: toAgent(agentRow(ctx, tenant, name) as AgentRow), created: !existing };
  });
}

export function listAgents(
  ctx: StoreContext,
  tenant: string,
  limit: number,
  cursor?: string,
): Page<Agent> {
  return listByKey(
    ctx,
    { ...AGENT_LIST, tenant, limit, cursor },
    toAgent,
    (row: AgentRow) => row.name,
  );
}

export function deleteAgent(ctx: StoreContext, tenant: string, name: string): boolean {
  return ctx.write((changes) => {
    const deleted =
      ctx.sql('DELETE FROM agents WHERE tenant = ? AND name = ?').run(tenant, name).changes > 0;
    if (!deleted) return false;
    failActiveRuns(ctx, changes, { tenant, agent: name }, agentDeletedError(name));
    disableSchedulesOfAgent(ctx, tenant, name);
    changes.push(resourceChange(tenant, 'agent', name));
    return true;
  });
}
