// The shared write guards (../repositories/guards.ts) for the repositories still written
// per backend, inside their transaction.

import * as guards from '../repositories/guards.ts';
import type { Tx } from './context.ts';
import type { TenantRow } from './rows.ts';
import { within } from './steps.ts';

export function requireTenant(tx: Tx, name: string): Promise<TenantRow> {
  return within(tx, (writes) => guards.requireTenant(writes, name));
}
