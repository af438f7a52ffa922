// Model usage and budgets (src/store/rules/usage.ts): the ledger a progress write adds
// to in its own transaction, the daily budget a new turn checks, the usage report.
// Each upsert adds to the row under its row lock, so two workers' writes both count.

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
import type { PgContext, Sql, Tx } from './context.ts';
import { requireTenant } from './guards.ts';

const SUMS = `SUM(input_tokens)::float8 AS input_tokens, SUM(output_tokens)::float8 AS output_tokens,
  SUM(model_calls)::float8 AS model_calls, SUM(cost_usd)::float8 AS cost_usd`;

/** Inside appendProgress's transaction: the `model.response` usage of this write. */
export async function recordUsage(
  tx: Tx,
  run: { tenant: string; run_id: string; agent: string; scope: string },
  progress: ProgressInput,
): Promise<void> {
  const deltas = usageOfEvents(progress.events);
  if (deltas.length === 0) return;
  const day = usageDay(tx.now);
  for (const d of deltas) {
    const values = [d.input_tokens, d.output_tokens, d.model_calls, d.cost_usd];
    await tx.one(
      `INSERT INTO usage_ledger AS u (run_id, day, model, tenant, agent, scope, input_tokens,
         output_tokens, model_calls, cost_usd) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (run_id, day, model) DO UPDATE SET
         input_tokens = u.input_tokens + EXCLUDED.input_tokens,
         output_tokens = u.output_tokens + EXCLUDED.output_tokens,
         model_calls = u.model_calls + EXCLUDED.model_calls,
         cost_usd = u.cost_usd + EXCLUDED.cost_usd`,
      [run.run_id, day, d.model, run.tenant, run.agent, run.scope, ...values],
    );
    await tx.one(
      `INSERT INTO usage_tenant_day AS u (tenant, day, input_tokens, output_tokens, model_calls,
         cost_usd) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (tenant, day) DO UPDATE SET
         input_tokens = u.input_tokens + EXCLUDED.input_tokens,
         output_tokens = u.output_tokens + EXCLUDED.output_tokens,
         model_calls = u.model_calls + EXCLUDED.model_calls,
         cost_usd = u.cost_usd + EXCLUDED.cost_usd`,
      [run.tenant, day, ...values],
    );
  }
}

async function budgetOf(sql: Sql, tenant: string): Promise<TenantBudget> {
  const row = await sql.one<TenantBudget>(
    'SELECT daily_tokens, daily_cost_usd FROM tenant_budgets WHERE tenant = $1',
    [tenant],
  );
  return row ?? NO_BUDGET;
}

async function tenantDay(sql: Sql, tenant: string, day: string): Promise<UsageTotals> {
  const row = await sql.one<Record<string, number>>(
    'SELECT * FROM usage_tenant_day WHERE tenant = $1 AND day = $2',
    [tenant, day],
  );
  return toTotals(row);
}

/** Inside enqueueRun's transaction: a new turn past the daily budget is refused. */
export async function requireDailyBudget(tx: Tx, tenant: string): Promise<void> {
  const budget = await budgetOf(tx, tenant);
  if (budget.daily_tokens === null && budget.daily_cost_usd === null) return;
  const reached = budgetReached(budget, await tenantDay(tx, tenant, usageDay(tx.now)));
  if (reached) throw dailyBudgetError(tenant, reached, tx.now);
}

export async function getBudgetState(
  ctx: PgContext,
  tenant: string,
  runId: string,
): Promise<BudgetState> {
  const day = usageDay(await ctx.now());
  const row = await ctx.read.one<Record<string, unknown>>(BUDGET_STATE_SQL, [tenant, day, runId]);
  return budgetStateOf(row);
}

export function getTenantBudget(sql: Sql, tenant: string): Promise<TenantBudget> {
  return budgetOf(sql, tenant);
}

export async function putTenantBudget(
  ctx: PgContext,
  tenant: string,
  budget: TenantBudget,
): Promise<TenantBudget> {
  return ctx.write(async (tx) => {
    await requireTenant(tx, tenant);
    await tx.one(
      `INSERT INTO tenant_budgets (tenant, daily_tokens, daily_cost_usd) VALUES ($1, $2, $3)
       ON CONFLICT (tenant) DO UPDATE SET daily_tokens = EXCLUDED.daily_tokens,
         daily_cost_usd = EXCLUDED.daily_cost_usd`,
      [tenant, budget.daily_tokens, budget.daily_cost_usd],
    );
    return budgetOf(tx, tenant);
  });
}

export async function getUsage(
  sql: Sql,
  tenant: string,
  query: UsageQuery,
): Promise<{ rows: UsageRow[]; total: UsageTotals }> {
  const key = groupKeySql(query.group_by);
  const rows = await sql.rows<Record<string, number> & { key: string }>(
    `SELECT ${key} AS key, ${SUMS} FROM usage_ledger
     WHERE tenant = $1 AND day >= $2 AND day <= $3 GROUP BY 1 ORDER BY 1`,
    [tenant, query.from, query.to],
  );
  const total = await sql.one<Record<string, number | null>>(
    `SELECT ${SUMS} FROM usage_ledger WHERE tenant = $1 AND day >= $2 AND day <= $3`,
    [tenant, query.from, query.to],
  );
  return { rows: rows.map((row) => ({ key: row.key, ...toTotals(row) })), total: toTotals(total) };
}
