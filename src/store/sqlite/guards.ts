// The shared write guards (../repositories/guards.ts) for the repositories still written
// per backend, inside their synchronous write.

import * as guards from '../repositories/guards.ts';
import type { StoreContext } from './context.ts';
import type { TenantRow } from './rows.ts';
import { read } from './steps.ts';

export function requireTenant(ctx: StoreContext, name: string): TenantRow {
  return read(ctx, (db) => guards.requireTenant(db, name));
}
