// Model usage and budgets: the rules both store backends follow, written once.
//
// Counting. Every `model.response` event a progress write appends (and every
// `context.compacted` event, whose summary call is a model call too) carries the call's
// `usage` ({input_tokens, output_tokens}), the agent's `model` ("provider/model") and
// its `cost_usd` (priced by the runtime, src/runtime/usage-prices.ts). The same
// transaction that appends the event adds it to usage_ledger (per run, UTC day, model)
// and usage_tenant_day (per tenant and day). A fenced write that loses its lease rolls
// back whole, so the totals are always the sum of the journal's model-call usage:
// a crash, a retried attempt or a second worker never resets or double-counts them.
//
// Budgets. A tenant's daily budget (`daily_tokens`, `daily_cost_usd`, in
// tenant_budgets) refuses new turns once today's (UTC) usage reached it, with
// 429 BUDGET_EXCEEDED; a running run stops at its next step boundary
// (src/runtime/budgets.ts) with the same code.

import { KeelError } from '../../errors.ts';
import type { JsonObject } from '../../types.ts';

export type UsageGroupBy = 'agent' | 'day' | 'model' | 'thread' | 'run';
export const USAGE_GROUPS: readonly UsageGroupBy[] = ['agent', 'day', 'model', 'thread', 'run'];

/** Token and cost totals of a group (or of a whole range). */
export interface UsageTotals {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  model_calls: number;
  cost_usd: number;
}

export interface UsageRow extends UsageTotals {
  /** The group's key: agent name, day (YYYY-MM-DD), model, "agent/scope" or run id. */
  key: string;
}

export interface UsageQuery {
  /** First and last UTC day, inclusive (YYYY-MM-DD). */
  from: string;
  to: string;
  group_by: UsageGroupBy;
}

/** A tenant's daily budget; null = no limit of that kind. */
export interface TenantBudget {
  daily_tokens: number | null;
  daily_cost_usd: number | null;
}

/** What a step boundary checks: the tenant's budget, today's and the run's usage. */
export interface BudgetState {
  budget: TenantBudget;
  today: UsageTotals;
  run: UsageTotals;
}

/** One model call's usage as the store adds it. */
export interface UsageDelta {
  model: string;
  input_tokens: number;
  output_tokens: number;
  model_calls: number;
  cost_usd: number;
}

export const NO_BUDGET: TenantBudget = { daily_tokens: null, daily_cost_usd: null };

export function emptyTotals(): UsageTotals {
  return { input_tokens: 0, output_tokens: 0, total_tokens: 0, model_calls: 0, cost_usd: 0 };
}

/** The UTC day (YYYY-MM-DD) of a millisecond timestamp: the unit of daily budgets. */
export function usageDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Seconds from `ms` to the next UTC midnight, when a daily budget starts again. */
export function secondsToNextDay(ms: number): number {
  const day = 86_400_000;
  return Math.max(1, Math.ceil((day - (ms % day)) / 1000));
}

/** The journal events that record a model call's usage. */
const USAGE_EVENT_TYPES: ReadonlySet<string> = new Set([
  'model.response',
  'context.compacted',
  'memory.flush',
]);

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

/**
 * The usage a progress write's events add, summed per model. Only model calls count
 * (`model.response`, `context.compacted` for its summary call, `memory.flush`); a missing model is
 * "unknown", a missing or bad cost is 0.
 */
export function usageOfEvents(
  events: readonly { type: string; data: JsonObject }[] | undefined,
): UsageDelta[] {
  if (!events) return [];
  const byModel = new Map<string, UsageDelta>();
  for (const event of events) {
    if (!USAGE_EVENT_TYPES.has(event.type)) continue;
    const usage = event.data.usage as { input_tokens?: unknown; output_tokens?: unknown } | null;
    if (typeof usage !== 'object' || usage === null) continue;
    const model = typeof event.data.model === 'string' ? event.data.model : 'unknown';
    const delta = byModel.get(model) ?? {
      model,
      input_tokens: 0,
      output_tokens: 0,
      model_calls: 0,
      cost_usd: 0,
    };
    delta.input_tokens += count(usage.input_tokens);
    delta.output_tokens += count(usage.output_tokens);
    delta.model_calls += 1;
    delta.cost_usd += count(event.data.cost_usd);
    byModel.set(model, delta);
  }
  return [...byModel.values()];
}

/** A stored row's sums (numbers or numeric strings) as totals. */
export function toTotals(row: Record<string, unknown> | undefined): UsageTotals {
  const input = Number(row?.input_tokens ?? 0);
  const output = Number(row?.output_tokens ?? 0);
  return {
    input_tokens: input,
    output_tokens: output,
    total_tokens: input + output,
    model_calls: Number(row?.model_calls ?? 0),
    cost_usd: Number(row?.cost_usd ?? 0),
  };
}

/** The row of the step boundary's check (repositories/usage.ts, getBudgetState). */
export function budgetStateOf(row: Record<string, unknown> | undefined): BudgetState {
  const nullable = (value: unknown) =>
    value === null || value === undefined ? null : Number(value);
  return {
    budget: {
      daily_tokens: nullable(row?.daily_tokens),
      daily_cost_usd: nullable(row?.daily_cost_usd),
    },
    today: toTotals({
      input_tokens: row?.day_input,
      output_tokens: row?.day_output,
      model_calls: row?.day_calls,
      cost_usd: row?.day_cost,
    }),
    run: toTotals({
      input_tokens: row?.run_input,
      output_tokens: row?.run_output,
      model_calls: row?.run_calls,
      cost_usd: row?.run_cost,
    }),
  };
}

/** The SQL expression of a group's key over usage_ledger (both dialects accept it). */
export function groupKeySql(groupBy: UsageGroupBy): string {
  switch (groupBy) {
    case 'agent':
      return 'agent';
    case 'day':
      return 'day';
    case 'model':
      return 'model';
    case 'thread':
      return "agent || '/' || scope";
    case 'run':
      return 'run_id';
  }
}

/** The limit today's usage has reached, or null while the budget has room. */
export function budgetReached(
  budget: TenantBudget,
  today: UsageTotals,
): { limit: 'daily_tokens' | 'daily_cost_usd'; allowed: number; used: number } | null {
  if (budget.daily_tokens !== null && today.total_tokens >= budget.daily_tokens) {
    return { limit: 'daily_tokens', allowed: budget.daily_tokens, used: today.total_tokens };
  }
  if (budget.daily_cost_usd !== null && today.cost_usd >= budget.daily_cost_usd) {
    return { limit: 'daily_cost_usd', allowed: budget.daily_cost_usd, used: today.cost_usd };
  }
  return null;
}

/** The refusal of a new turn (or the stop of a running run) past the daily budget. */
export function dailyBudgetError(
  tenant: string,
  reached: NonNullable<ReturnType<typeof budgetReached>>,
  now: number,
): KeelError {
  const used =
    reached.limit === 'daily_cost_usd' ? `${reached.used.toFixed(6)} USD` : `${reached.used}`;
  return new KeelError(
    'BUDGET_EXCEEDED',
    `tenant ${tenant} used ${used} of its ${reached.limit} budget of ${reached.allowed} today (UTC); new turns are refused until 00:00 UTC`,
    {
      limit: reached.limit,
      allowed: reached.allowed,
      used: reached.used,
      retry_after_s: secondsToNextDay(now),
    },
  );
}
