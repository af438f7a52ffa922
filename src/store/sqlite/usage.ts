// Model usage and budgets (src/store/rules/usage.ts): the ledger a progress write adds
// to in its own transaction, the daily budget a new turn checks, the usage report.

import type { ProgressInput } from '../store.ts';
import type {
  BudgetState,
  TenantBudget,
  UsageQuery,
  UsageRow,
  UsageTotals,
} from '../rules/usage.ts';
import {
  BUDGET_STATE_SQL,
  NO_BUDGET,
  budgetStateOf,
  budgetReached,
  dailyBudgetError,
  groupKeySql,
  toTotals,
  usageDay,
  usageOfEvents,
} from '../rules/usage.ts';
import type { StoreContext } from './context.ts';
import { requireTenant } from './guards.ts';

const SUMS = `SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens,
  SUM(model_calls) AS model_calls, SUM(cost_usd) AS cost_usd`;

/** Inside appendProgress's transaction: the `model.response` usage of this write. */
export function recordUsage(
  ctx: StoreContext,
  run: { tenant: string; run_id: string; agent: string; scope: string },
  progress: ProgressInput,
  now: number,
): void {
  const deltas = usageOfEvents(progress.events);
  if (deltas.length === 0) return;
  const day = usageDay(now);
  for (const d of deltas) {
    const values = [d.input_tokens, d.output_tokens, d.model_calls, d.cost_usd];
    ctx
      .sql(
        `INSERT INTO usage_ledger (run_id, day, model, tenant, agent, scope, input_tokens,
           output_tokens, model_calls, cost_usd) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (run_id, day, model) DO UPDATE SET
           input_tokens = input_tokens + excluded.input_tokens,
           output_tokens = output_tokens + excluded.output_tokens,
           model_calls = model_calls + excluded.model_calls,
           cost_usd = cost_usd + excluded.cost_usd`,
      )
      .run(run.run_id, day, d.model, run.tenant, run.agent, run.scope, ...values);
    ctx
      .sql(
        `INSERT INTO usage_tenant_day (tenant, day, input_tokens, output_tokens, model_calls,
           cost_usd) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (tenant, day) DO UPDATE SET
           input_tokens = input_tokens + excluded.input_tokens,
           output_tokens = output_tokens + excluded.output_tokens,
           model_calls = model_calls + excluded.model_calls,
           cost_usd = cost_usd + excluded.cost_usd`,
      )
      .run(run.tenant, day, ...values);
  }
}

function budgetOf(ctx: StoreContext, tenant: string): TenantBudget {
  const row = ctx
    .sql('SELECT daily_tokens, daily_cost_usd FROM tenant_budgets WHERE tenant = ?')
    .get(tenant) as TenantBudget | undefined;
  return row ?? NO_BUDGET;
}

function tenantDay(ctx: StoreContext, tenant: string, day: string): UsageTotals {
  return toTotals(
    ctx.sql('SELECT * FROM usage_tenant_day WHERE tenant = ? AND day = ?').get(tenant, day) as
      Record<string, number> | undefined,
  );
}

/** Inside enqueueRun's transaction: a new turn past the daily budget is refused. */
export function requireDailyBudget(ctx: StoreContext, tenant: string): void {
  const budget = budgetOf(ctx, tenant);
  if (budget.daily_tokens === null && budget.daily_cost_usd === null) return;
  const now = ctx.now();
  const reached = budgetReached(budget, tenantDay(ctx, tenant, usageDay(now)));
  if (reached) throw dailyBudgetError(tenant, reached, now);
}

// The shared statement with SQLite's numbered parameters (?1 for PostgreSQL's $1), bound
// by number through an object.
const BUDGET_STATE_SQLITE = BUDGET_STATE_SQL.replace(/\$(\d)/g, '?$1');

export function getBudgetState(ctx: StoreContext, tenant: string, runId: string): BudgetState {
  const row = ctx.sql(BUDGET_STATE_SQLITE).get({ 1: tenant, 2: usageDay(ctx.now()), 3: runId }) as
    Record<string, unknown> | undefined;
  return budgetStateOf(row);
}

export function getTenantBudget(ctx: StoreContext, tenant: string): TenantBudget {
  return budgetOf(ctx, tenant);
}

export function putTenantBudget(
  ctx: StoreContext,
  tenant: string,
  budget: TenantBudget,
): TenantBudget {
  return ctx.write(() => {
    requireTenant(ctx, tenant);
    ctx
      .sql(
        `INSERT INTO tenant_budgets (tenant, daily_tokens, daily_cost_usd) VALUES (?, ?, ?)
         ON CONFLICT (tenant) DO UPDATE SET daily_tokens = excluded.daily_tokens,
           daily_cost_usd = excluded.daily_cost_usd`,
      )
      .run(tenant, budget.daily_tokens, budget.daily_cost_usd);
    return budgetOf(ctx, tenant);
  });
}

export function getUsage(
  ctx: StoreContext,
  tenant: string,
  query: UsageQuery,
): { rows: UsageRow[]; total: UsageTotals } {
  const key = groupKeySql(query.group_by);
  const rows = ctx
    .sql(
      `SELECT ${key} AS key, ${SUMS} FROM usage_ledger
       WHERE tenant = ? AND day >= ? AND day <= ? GROUP BY 1 ORDER BY 1`,
    )
    .all(tenant, query.from, query.to) as (Record<string, number> & { key: string })[];
  const total = ctx
    .sql(`SELECT ${SUMS} FROM usage_ledger WHERE tenant = ? AND day >= ? AND day <= ?`)
    .get(tenant, query.from, query.to) as Record<string, number | null> | undefined;
  return { rows: rows.map((row) => ({ key: row.key, ...toTotals(row) })), total: toTotals(total) };
}
