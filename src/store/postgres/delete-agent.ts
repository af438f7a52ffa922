// Deleting an agent on PostgreSQL: it ends the agent's active runs and disables its
// schedules; ending runs is still written per backend (run-writes.ts), the rest is shared
// (../repositories/agents.ts, ../repositories/schedules.ts).

import { agentDeletedError } from '../rules/tenants.ts';
import { resourceChange } from '../rules/resource-changes.ts';
import type { PgContext } from './context.ts';
import { failActiveRuns } from './run-writes.ts';
import { disableSchedulesOfAgent } from '../repositories/schedules.ts';
import { within } from './steps.ts';

export async function deleteAgent(ctx: PgContext, tenant: string, name: string): Promise<boolean> {
  return ctx.write(async (tx) => {
    const deleted =
      (await tx.count('DELETE FROM agents WHERE tenant = $1 AND name = $2', [tenant, name])) > 0;
    if (!deleted) return false;
    await failActiveRuns(tx, { tenant, agent: name }, agentDeletedError(name));
    await within(tx, (w) => disableSchedulesOfAgent(w, tenant, name));
    tx.changes.push(resourceChange(tenant, 'agent', name));
    return true;
  });
}
