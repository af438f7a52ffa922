// Model usage and budgets (src/store/rules/usage.ts), for both backends: the ledger a
// progress write adds to in its own transaction, the daily budget a new turn checks,
// the usage report. Each upsert adds to the row it conflicts with, under that row's
// lock, so two workers' writes both count.

import type { ProgressInput } from '../store.ts';
import type {
  BudgetState,
  TenantBudget,
  UsageQuery,
  UsageRow,
  UsageTotals,
} from '../rules/usage.ts';
import {
  NO_BUDGET,
  budgetStateOf,
  budgetReached,
  dailyBudgetError,
  groupKeySql,
  toTotals,
  usageDay,
  usageOfEvents,
} from '../rules/usage.ts';
import { raw, sql } from '../sql/query.ts';
import type { Op, Reads, Writes } from '../sql/steps.ts';
import { requireTenant } from './guards.ts';

// Sums of bigint columns are numeric on PostgreSQL (text in JS): toTotals reads numbers.
const SUMS = raw(`SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens,
  SUM(model_calls) AS model_calls, SUM(cost_usd) AS cost_usd`);

/** Inside appendProgress's transaction: the `model.response` usage of this write. */
export function* recordUsage(
  tx: Writes,
  run: { tenant: string; run_id: string; agent: string; scope: string },
  progress: ProgressInput,
): Op<void> {
  const deltas = usageOfEvents(progress.events);
  if (deltas.length === 0) return;
  const day = usageDay(tx.now);
  for (const d of deltas) {
    yield* tx.run(
      sql`INSERT INTO usage_ledger (run_id, day, model, tenant, agent, scope, input_tokens,
            output_tokens, model_calls, cost_usd)
          VALUES (${run.run_id}, ${day}, ${d.model}, ${run.tenant}, ${run.agent}, ${run.scope},
            ${d.input_tokens}, ${d.output_tokens}, ${d.model_calls}, ${d.cost_usd})
          ON CONFLICT (run_id, day, model) DO UPDATE SET
            input_tokens = usage_ledger.input_tokens + excluded.input_tokens,
            output_tokens = usage_ledger.output_tokens + excluded.output_tokens,
            model_calls = usage_ledger.model_calls + excluded.model_calls,
            cost_usd = usage_ledger.cost_usd + excluded.cost_usd`,
    );
    yield* tx.run(
      sql`INSERT INTO usage_tenant_day (tenant, day, input_tokens, output_tokens, model_calls,
            cost_usd)
          VALUES (${run.tenant}, ${day}, ${d.input_tokens}, ${d.output_tokens}, ${d.model_calls},
            ${d.cost_usd})
          ON CONFLICT (tenant, day) DO UPDATE SET
            input_tokens = usage_tenant_day.input_tokens + excluded.input_tokens,
            output_tokens = usage_tenant_day.output_tokens + excluded.output_tokens,
            model_calls = usage_tenant_day.model_calls + excluded.model_calls,
            cost_usd = usage_tenant_day.cost_usd + excluded.cost_usd`,
    );
  }
}

export function* getTenantBudget(db: Reads, tenant: string): Op<TenantBudget> {
  const row = yield* db.one<TenantBudget>(
    sql`SELECT daily_tokens, daily_cost_usd FROM tenant_budgets WHERE tenant = ${tenant}`,
  );
  return row ?? NO_BUDGET;
}

function* tenantDay(db: Reads, tenant: string, day: string): Op<UsageTotals> {
  const row = yield* db.one<Record<string, number>>(
    sql`SELECT * FROM usage_tenant_day WHERE tenant = ${tenant} AND day = ${day}`,
  );
  return toTotals(row);
}

/** Inside enqueueRun's transaction: a new turn past the daily budget is refused. */
export function* requireDailyBudget(tx: Writes, tenant: string): Op<void> {
  const budget = yield* getTenantBudget(tx, tenant);
  if (budget.daily_tokens === null && budget.daily_cost_usd === null) return;
  const reached = budgetReached(budget, yield* tenantDay(tx, tenant, usageDay(tx.now)));
  if (reached) throw dailyBudgetError(tenant, reached, tx.now);
}

/** A step boundary's check in one row: the budget, today's usage, the run's usage. */
export function* getBudgetState(
  db: Reads,
  tenant: string,
  runId: string,
  now: number,
): Op<BudgetState> {
  const row = yield* db.one<Record<string, unknown>>(
    sql`SELECT
          (SELECT daily_tokens FROM tenant_budgets WHERE tenant = ${tenant}) AS daily_tokens,
          (SELECT daily_cost_usd FROM tenant_budgets WHERE tenant = ${tenant}) AS daily_cost_usd,
          d.input_tokens AS day_input, d.output_tokens AS day_output,
          d.model_calls AS day_calls, d.cost_usd AS day_cost,
          r.input_tokens AS run_input, r.output_tokens AS run_output,
          r.model_calls AS run_calls, r.cost_usd AS run_cost
        FROM (SELECT 1 AS one) AS base
        LEFT JOIN usage_tenant_day AS d ON d.tenant = ${tenant} AND d.day = ${usageDay(now)}
        LEFT JOIN (SELECT ${SUMS} FROM usage_ledger WHERE run_id = ${runId}) AS r ON true`,
  );
  return budgetStateOf(row);
}

export function* putTenantBudget(
  tx: Writes,
  tenant: string,
  budget: TenantBudget,
): Op<TenantBudget> {
  yield* requireTenant(tx, tenant);
  yield* tx.run(
    sql`INSERT INTO tenant_budgets (tenant, daily_tokens, daily_cost_usd)
        VALUES (${tenant}, ${budget.daily_tokens}, ${budget.daily_cost_usd})
        ON CONFLICT (tenant) DO UPDATE SET daily_tokens = excluded.daily_tokens,
          daily_cost_usd = excluded.daily_cost_usd`,
  );
  return yield* getTenantBudget(tx, tenant);
}

export function* getUsage(
  db: Reads,
  tenant: string,
  query: UsageQuery,
): Op<{ rows: UsageRow[]; total: UsageTotals }> {
  const where = sql`tenant = ${tenant} AND day >= ${query.from} AND day <= ${query.to}`;
  const rows = yield* db.rows<Record<string, number> & { key: string }>(
    sql`SELECT ${raw(groupKeySql(query.group_by))} AS key, ${SUMS} FROM usage_ledger
        WHERE ${where} GROUP BY 1 ORDER BY 1`,
  );
  const total = yield* db.one<Record<string, number | null>>(
    sql`SELECT ${SUMS} FROM usage_ledger WHERE ${where}`,
  );
  return { rows: rows.map((row) => ({ key: row.key, ...toTotals(row) })), total: toTotals(total) };
}
