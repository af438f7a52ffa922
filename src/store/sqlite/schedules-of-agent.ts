// Kept apart from schedules.ts so tenants.ts (deleteAgent) can use it without an import
// cycle (schedules.ts → runs.ts → tenants.ts).

import { agentDeletedNote } from '../rules/schedules.ts';
import type { StoreContext } from './context.ts';

/**
 * Called inside deleteAgent's transaction: the agent's schedules stop at once instead
 * of failing every tick (docs/http-api.md, agents).
 */
export function disableSchedulesOfAgent(ctx: StoreContext, tenant: string, agent: string): void {
  ctx
    .sql(
      `UPDATE schedules SET enabled = 0, next_fire_at = NULL, last_error = ?,
         revision = revision + 1, updated_at = ?
       WHERE tenant = ? AND agent = ? AND enabled = 1`,
    )
    .run(agentDeletedNote(agent), ctx.now(), tenant, agent);
}
