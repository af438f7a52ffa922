// A tenant's model usage and daily budget (docs/http-api.md, Usage):
//   GET /v1/tenants/{tenant}/usage?from&to&group_by — tokens and cost per group, from the
//   usage ledger the journal's model responses fill (src/store/rules/usage.ts).
// The budget itself is set by PATCH /v1/tenants/{tenant} `limits` (tenants.ts).

import { z } from 'zod';
import type { TenantBudget } from '../../store/rules/usage.ts';
import { USAGE_GROUPS, usageDay } from '../../store/rules/usage.ts';
import type { TenantStore, UsageStore } from '../../store/store.ts';
import { KeelError } from '../../errors.ts';
import type { ApiDepsWith, ZodApp } from '../deps.ts';
import { tenantParams } from '../schemas.ts';

type Deps = ApiDepsWith<UsageStore & Pick<TenantStore, 'getTenant'>>;

const DAY_MS = 86_400_000;
/** The longest range one request may sum (a year and a day). */
export const MAX_USAGE_DAYS = 366;
const DEFAULT_DAYS = 30;

const daySchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, { message: 'must be a UTC day YYYY-MM-DD' })
  .refine(
    (day) => !Number.isNaN(Date.parse(`${day}T00:00:00Z`)) && usageDay(Date.parse(day)) === day,
    {
      message: 'is not a calendar day',
    },
  );

const usageQuery = z.strictObject({
  from: daySchema
    .optional()
    .describe(`first UTC day (default: ${DEFAULT_DAYS - 1} days before to)`),
  to: daySchema.optional().describe('last UTC day, inclusive (default: today)'),
  group_by: z.enum(USAGE_GROUPS).default('day'),
});

/** The range's problem, named by field as a zod issue would be; null when fine. */
function rangeProblem(from: string, to: string): string | null {
  const days = (Date.parse(to) - Date.parse(from)) / DAY_MS + 1;
  if (days < 1) return `querystring.from: ${from} is after to (${to})`;
  if (days > MAX_USAGE_DAYS) {
    return `querystring.from: the range spans ${days} days; at most ${MAX_USAGE_DAYS}`;
  }
  return null;
}

/** PATCH /v1/tenants/{tenant} `limits`: omitted keeps, null removes. */
export const tenantLimitsSchema = z
  .strictObject({
    daily_tokens: z.int().min(1).max(1e15).nullable().optional(),
    daily_cost_usd: z.number().positive().max(1e9).nullable().optional(),
  })
  .describe("the tenant's daily budget (UTC day): new turns get 429 BUDGET_EXCEEDED past it");

export async function applyTenantLimits(
  store: Pick<UsageStore, 'getTenantBudget' | 'putTenantBudget'>,
  tenant: string,
  limits: z.output<typeof tenantLimitsSchema>,
): Promise<TenantBudget> {
  const current = await store.getTenantBudget(tenant);
  return store.putTenantBudget(tenant, {
    daily_tokens: limits.daily_tokens === undefined ? current.daily_tokens : limits.daily_tokens,
    daily_cost_usd:
      limits.daily_cost_usd === undefined ? current.daily_cost_usd : limits.daily_cost_usd,
  });
}

export function usageRoutes(app: ZodApp, deps: Deps): void {
  const { store } = deps;
  app.get(
    '/v1/tenants/:tenant/usage',
    {
      config: { auth: 'tenant' },
      schema: { tags: ['tenants'], params: tenantParams, querystring: usageQuery },
    },
    async (request) => {
      const { tenant } = request.params;
      if (!(await store.getTenant(tenant))) {
        throw new KeelError('TENANT_NOT_FOUND', `tenant ${tenant} not found`);
      }
      const to = request.query.to ?? usageDay(Date.now());
      const from = request.query.from ?? usageDay(Date.parse(to) - (DEFAULT_DAYS - 1) * DAY_MS);
      const problem = rangeProblem(from, to);
      if (problem) throw new KeelError('VALIDATION_FAILED', problem);
      const group_by = request.query.group_by;
      const usage = await store.getUsage(tenant, { from, to, group_by });
      const limits = await store.getTenantBudget(tenant);
      return { from, to, group_by, groups: usage.rows, total: usage.total, limits };
    },
  );
}
