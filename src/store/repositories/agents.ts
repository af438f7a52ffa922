// A tenant's agents, for both backends. Deleting one also fails its active runs and
// disables its schedules, in the same transaction.

import type { Agent, AgentSpec } from '../../types.ts';
import type { AgentRow } from '../rows.ts';
import { toAgent } from '../rows.ts';
import { AGENT_LIST } from '../rules/keyset.ts';
import { resourceChange } from '../rules/resource-changes.ts';
import { agentDeletedError } from '../rules/tenants.ts';
import { sql } from '../sql/query.ts';
import type { Op, Reads, Writes } from '../sql/steps.ts';
import { requireTenant } from './guards.ts';
import { listByName } from './keyset.ts';
import { refuseCreatePastQuota } from './named-rows.ts';
import { failActiveRuns } from './run-writes.ts';
import { disableSchedulesOfAgent } from './schedules.ts';
import { bumpedUpdatedAt, wasCreated } from './upsert.ts';

export function* getAgent(db: Reads, tenant: string, name: string): Op<Agent | null> {
  const row = yield* db.one<AgentRow>(
    sql`SELECT * FROM agents WHERE tenant = ${tenant} AND name = ${name}`,
  );
  return row ? toAgent(row) : null;
}

export function* putAgent(
  tx: Writes,
  tenant: string,
  name: string,
  spec: AgentSpec,
  maxAgents?: number,
): Op<{ agent: Agent; created: boolean }> {
  yield* requireTenant(tx, tenant);
  yield* refuseCreatePastQuota(tx, 'agents', tenant, name, maxAgents);
  const row = yield* tx.one<AgentRow>(
    sql`INSERT INTO agents (tenant, name, spec, created_at, updated_at)
        VALUES (${tenant}, ${name}, ${JSON.stringify(spec)}, ${tx.now}, ${tx.now})
        ON CONFLICT (tenant, name) DO UPDATE
          SET spec = excluded.spec, updated_at = ${bumpedUpdatedAt(tx, 'agents')}
        RETURNING *`,
  );
  if (!row) throw new Error('agent row missing after write');
  tx.changes.push(resourceChange(tenant, 'agent', name));
  return { agent: toAgent(row), created: wasCreated(row) };
}

export function listAgents(db: Reads, tenant: string, limit: number, cursor?: string) {
  return listByName(db, AGENT_LIST, toAgent, { tenant, limit, cursor });
}

/** Deletes the agent, fails its queued, running and waiting runs, disables its schedules. */
export function* deleteAgent(tx: Writes, tenant: string, name: string): Op<boolean> {
  const deleted = yield* tx.run(
    sql`DELETE FROM agents WHERE tenant = ${tenant} AND name = ${name}`,
  );
  if (deleted === 0) return false;
  yield* failActiveRuns(tx, { tenant, agent: name }, agentDeletedError(name));
  yield* disableSchedulesOfAgent(tx, tenant, name);
  tx.changes.push(resourceChange(tenant, 'agent', name));
  return true;
}
