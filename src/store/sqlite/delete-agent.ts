// Deleting an agent on SQLite: it ends the agent's active runs and disables its
// schedules; ending runs is still written per backend (run-writes.ts), the rest is shared
// (../repositories/agents.ts, ../repositories/schedules.ts).

import { agentDeletedError } from '../rules/tenants.ts';
import { resourceChange } from '../rules/resource-changes.ts';
import type { StoreContext } from './context.ts';
import { failActiveRuns } from './run-writes.ts';
import { disableSchedulesOfAgent } from '../repositories/schedules.ts';
import { within } from './steps.ts';

export function deleteAgent(ctx: StoreContext, tenant: string, name: string): boolean {
  return ctx.write((changes) => {
    const deleted =
      ctx.sql('DELETE FROM agents WHERE tenant = ? AND name = ?').run(tenant, name).changes > 0;
    if (!deleted) return false;
    failActiveRuns(ctx, changes, { tenant, agent: name }, agentDeletedError(name));
    within(ctx, (tx) => disableSchedulesOfAgent(tx, tenant, name), { changes });
    changes.push(resourceChange(tenant, 'agent', name));
    return true;
  });
}
