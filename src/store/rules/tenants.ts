// The tenant, token and agent rules both backends share: the existence and
// optimistic-concurrency checks, what a token row shows, and what deleting a tenant or
// an agent does to their active runs. The SQL differs between backends.

import { KeelError } from '../../errors.ts';
import type { RunError, TokenRecord } from '../../types.ts';
import { iso } from '../rows.ts';
import type { TenantRow } from '../rows.ts';
import type { StoreChange } from '../store.ts';
import { terminalChange } from './run-writes.ts';

export function requireTenantFound<R>(row: R | undefined, name: string): R {
  if (!row) throw new KeelError('TENANT_NOT_FOUND', `tenant ${name} not found`);
  return row;
}

/** CONFLICT when the caller's if_updated_at is not the row's (updated_at is the token). */
export function checkIfUpdatedAt(row: TenantRow, name: string, ifUpdatedAt?: string): void {
  if (ifUpdatedAt !== undefined && ifUpdatedAt !== iso(row.updated_at)) {
    throw new KeelError(
      'CONFLICT',
      `tenant ${name} was updated at ${iso(row.updated_at)}, not ${ifUpdatedAt}`,
    );
  }
}

export interface TokenRow {
  id: string;
  tenant: string;
  name: string;
  hash: string;
  created_at: number;
}

/** Never the hash. */
export function toTokenRecord(row: TokenRow): TokenRecord {
  return { id: row.id, tenant: row.tenant, name: row.name, created_at: iso(row.created_at) };
}

/** A token's creation time: the one it carries, or the store clock's `now`. */
export function tokenCreatedAt(token: TokenRecord, now: number): number {
  const createdAt = Date.parse(token.created_at);
  return Number.isNaN(createdAt) ? now : createdAt;
}

/** The error every active run of a deleted agent fails with (their lanes free). */
export function agentDeletedError(agent: string): RunError {
  return { code: 'AGENT_NOT_FOUND', message: `agent ${agent} was deleted` };
}

/** A deleted tenant's active runs end as cancelled: waiters and workers must wake. */
export function tenantDeletedChanges(
  tenant: string,
  active: readonly { run_id: string }[],
): StoreChange[] {
  return active.map((run) => terminalChange(tenant, run.run_id, 'cancelled'));
}
