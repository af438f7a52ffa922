// Checks that several repositories start their writes with, for both backends.

import { requireTenantFound } from '../rules/tenants.ts';
import type { TenantRow } from '../rows.ts';
import { sql } from '../sql/query.ts';
import type { Op, Reads, Writes } from '../sql/steps.ts';

export function* tenantRow(db: Reads, name: string): Op<TenantRow | undefined> {
  return yield* db.one<TenantRow>(sql`SELECT * FROM tenants WHERE name = ${name}`);
}

/** Checks the tenant exists and keeps it from being deleted until the commit. */
export function* requireTenant(tx: Writes, name: string): Op<TenantRow> {
  const row = yield* tx.one<TenantRow>(
    sql`SELECT * FROM tenants WHERE name = ${name}${tx.dialect.keepsRow}`,
  );
  return requireTenantFound(row, name);
}
