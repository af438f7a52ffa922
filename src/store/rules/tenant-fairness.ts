// Fairness between tenants: the rules both store backends follow, written once. Only
// the SQL that applies them differs (src/store/sqlite/runs.ts, src/store/postgres/runs.ts,
// the two schedules.ts files).
//
// The claim. Among queued runs that head an idle lane (the lane guarantee: one running
// run per tenant/agent/scope, FIFO within the lane), a worker takes the run of the
// tenant with the FEWEST running runs, oldest first among equals; a tenant already at
// `max_running_per_tenant` running runs is passed over. So a tenant whose long runs
// fill the workers gets no further slot while another tenant waits, and never more than
// its cap even when nobody else is waiting. A run whose lease expired is reclaimed as
// before (it already counts as running, so the cap does not apply to it).
//
// The cap alone. A cap only protects other tenants, so the default cap (¾ of one
// process's slots) binds only while the store holds more than one tenant: a
// single-tenant deployment — the common case of a personal agent runtime — uses every
// slot of every worker process. An operator's explicit cap binds always. A cap that
// binds only while another tenant has QUEUED runs (work-conserving) was measured and
// rejected: the greedy tenant then takes every free slot between the other's turns,
// and the other's next turn waits for a long run to end (`npm run bench -- fairness`:
// B p99 17.6× its p99 alone, target ≤ 2×).
//
// Due schedules. A batch of due schedules is taken round-robin over tenants: every
// tenant's oldest due schedule, then every tenant's second, … (rank within the tenant,
// then due time), so thousands of one tenant's due schedules cannot fill the batches
// while another tenant's wait.
//
// Schedules, agents, MCP servers, WebAssembly tools, secrets and webhooks. A put that
// creates one counts the tenant's rows of its kind the same way (the named rows through
// one shared function, src/store/repositories/named-rows.ts), so racing creates cannot both take the last
// place; replacing one is never refused.
//
// Queued runs. An enqueue counts the tenant's queued runs inside its own transaction
// (SQLite: the single writer; PostgreSQL: a per-tenant advisory lock), so two racing
// enqueues cannot both pass the last free place.

import { KeelError } from '../../errors.ts';

/** How long a caller refused for a full queue should wait before trying again. */
const QUEUE_FULL_RETRY_AFTER_S = 5;

/** The error an enqueue past the tenant's queued-run limit raises (429 + Retry-After). */
export function queueFullError(tenant: string, limit: number): KeelError {
  return new KeelError(
    'RATE_LIMITED',
    `tenant ${tenant} already has ${limit} queued runs (limit tenant_limits.queued_runs); retry later`,
    { retry_after_s: QUEUE_FULL_RETRY_AFTER_S, limit: 'queued_runs' },
  );
}

/** True for the error queueFullError raises. */
export function isQueueFullError(error: unknown): error is KeelError {
  return (
    error instanceof KeelError &&
    error.code === 'RATE_LIMITED' &&
    error.details?.limit === 'queued_runs'
  );
}

/** True when one more queued run would pass the limit (null: no limit). */
export function queueIsFull(queued: number, limit: number | null | undefined): boolean {
  return limit !== null && limit !== undefined && queued >= limit;
}

/** The tenant's count quotas ([tenant_limits]): a create past one is 403 QUOTA_EXCEEDED. */
export type CountQuota =
  'schedules' | 'agents' | 'mcp_servers' | 'wasm_tools' | 'secrets' | 'webhooks';

/** The error a create past one of the tenant's count quotas raises (403). */
export function countQuotaError(tenant: string, limit: number, what: CountQuota): KeelError {
  return new KeelError(
    'QUOTA_EXCEEDED',
    `tenant ${tenant} already has ${limit} ${what} (limit tenant_limits.${what}); delete one first`,
    { limit: what },
  );
}

/** The error a schedule create past the tenant's schedule quota raises (403). */
export function scheduleQuotaError(tenant: string, limit: number): KeelError {
  return countQuotaError(tenant, limit, 'schedules');
}

/** The claim's per-tenant cap as a SQL parameter: no cap is a count nobody reaches. */
export function runningCapParam(cap: number | null | undefined): number {
  return cap === null || cap === undefined ? Number.MAX_SAFE_INTEGER : cap;
}

/** Whether the cap binds when the tenant is the store's only one, as a SQL 0/1. */
export function capWhenAloneParam(whenAlone: boolean | undefined): number {
  return whenAlone === false ? 0 : 1;
}
