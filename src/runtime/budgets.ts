// Budgets checked at every step boundary, before a model call (docs/agent-loop.md):
// the run's own (`max_total_tokens`, `max_cost_usd` in the agent) and its tenant's daily
// budget (PATCH /v1/tenants/{tenant} `limits`). Either ends the run BUDGET_EXCEEDED.
// The figures come from the store's usage ledger, which the journal's `model.response`
// events fill in their own transactions (src/store/rules/usage.ts), so a resumed or
// moved run sees every token it already spent.

import { budgetReached, dailyBudgetError } from '../store/rules/usage.ts';
import type { UsageTotals } from '../store/rules/usage.ts';
import type { UsageStore } from '../store/store.ts';
import type { Agent, RunFigures, RunOutcome } from '../types.ts';
import { runFailed } from './finalize.ts';

export type BudgetStore = Pick<UsageStore, 'getBudgetState'>;

/** Whether the run's own budget is used up by `run`; the message says which. */
export function runBudgetMessage(
  agent: Pick<Agent, 'max_total_tokens' | 'max_cost_usd'>,
  run: Pick<UsageTotals, 'total_tokens' | 'cost_usd'>,
): string | null {
  if (agent.max_total_tokens !== undefined && run.total_tokens >= agent.max_total_tokens) {
    return `the run used ${run.total_tokens} tokens of its max_total_tokens (${agent.max_total_tokens})`;
  }
  if (agent.max_cost_usd !== undefined && run.cost_usd >= agent.max_cost_usd) {
    return `the run cost ${run.cost_usd.toFixed(6)} USD of its max_cost_usd (${agent.max_cost_usd})`;
  }
  return null;
}

/**
 * The outcome that stops the run at this step boundary, or null to go on. Without a
 * usage store (tests of the bare loop) only the run's token budget is checked, from the
 * run's figures.
 */
export async function budgetStop(
  store: BudgetStore | undefined,
  run: { tenant: string; run_id: string },
  agent: Agent,
  figures: RunFigures,
  now: number,
): Promise<RunOutcome | null> {
  if (!store) {
    const { input_tokens, output_tokens } = figures.usage;
    const message = runBudgetMessage(agent, {
      total_tokens: input_tokens + output_tokens,
      cost_usd: 0,
    });
    return message === null ? null : runFailed('BUDGET_EXCEEDED', message);
  }
  const state = await store.getBudgetState(run.tenant, run.run_id);
  const message = runBudgetMessage(agent, state.run);
  if (message !== null) return runFailed('BUDGET_EXCEEDED', message);
  const reached = budgetReached(state.budget, state.today);
  if (reached)
    return runFailed('BUDGET_EXCEEDED', dailyBudgetError(run.tenant, reached, now).message);
  return null;
}
