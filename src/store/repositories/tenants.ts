// Tenants and their tokens, for both backends.

import type { JsonObject, Tenant, TokenRecord } from '../../types.ts';
import type { TenantRow } from '../rows.ts';
import { toTenant } from '../rows.ts';
import type { TokenRow } from '../rules/tenants.ts';
import {
  checkIfUpdatedAt,
  requireTenantFound,
  tenantDeletedChanges,
  toTokenRecord,
  tokenCreatedAt,
} from '../rules/tenants.ts';
import type { TokenLookup } from '../store.ts';
import { raw, sql } from '../sql/query.ts';
import type { Op, Reads, Writes } from '../sql/steps.ts';
import { requireTenant, tenantRow } from './guards.ts';

export function* createTenant(
  tx: Writes,
  name: string,
  metadata: JsonObject,
): Op<{ tenant: Tenant; created: boolean }> {
  const inserted = yield* tx.one<TenantRow>(
    sql`INSERT INTO tenants (name, metadata, created_at, updated_at)
        VALUES (${name}, ${JSON.stringify(metadata)}, ${tx.now}, ${tx.now})
        ON CONFLICT (name) DO NOTHING RETURNING *`,
  );
  if (inserted) return { tenant: toTenant(inserted), created: true };
  return { tenant: toTenant(yield* requireTenant(tx, name)), created: false };
}

export function* getTenant(db: Reads, name: string): Op<Tenant | null> {
  const row = yield* tenantRow(db, name);
  return row ? toTenant(row) : null;
}

export function* listTenants(db: Reads): Op<Tenant[]> {
  return (yield* db.rows<TenantRow>(sql`SELECT * FROM tenants ORDER BY name`)).map(toTenant);
}

function* lockedTenantRow(tx: Writes, name: string): Op<TenantRow | undefined> {
  return yield* tx.one<TenantRow>(
    sql`SELECT * FROM tenants WHERE name = ${name}${tx.dialect.locksRow}`,
  );
}

export function* updateTenant(
  tx: Writes,
  name: string,
  metadata: JsonObject,
  ifUpdatedAt: string | undefined,
): Op<Tenant> {
  const row = yield* lockedTenantRow(tx, name);
  checkIfUpdatedAt(requireTenantFound(row, name), name, ifUpdatedAt);
  // updated_at is the optimistic-concurrency token: it changes on every update, even
  // two within one millisecond.
  const updated = yield* tx.one<TenantRow>(
    sql`UPDATE tenants SET metadata = ${JSON.stringify(metadata)},
          updated_at = ${tx.dialect.greatest(sql`${tx.now}`, sql`updated_at + 1`)}
        WHERE name = ${name} RETURNING *`,
  );
  return toTenant(updated as TenantRow);
}

export function* deleteTenant(tx: Writes, name: string): Op<boolean> {
  if (!(yield* lockedTenantRow(tx, name))) return false;
  const active = yield* tx.rows<{ run_id: string }>(
    sql`SELECT run_id FROM runs
        WHERE tenant = ${name} AND status IN ('queued', 'running', 'waiting')${tx.dialect.locksRow}`,
  );
  // Children first, so the result does not depend on foreign-key cascades.
  for (const table of ['approvals', 'deliveries', 'threads', 'tokens', 'agents']) {
    yield* tx.run(sql`DELETE FROM ${raw(table)} WHERE tenant = ${name}`);
  }
  for (const table of ['run_entries', 'run_events']) {
    yield* tx.run(
      sql`DELETE FROM ${raw(table)} WHERE run_id IN (SELECT run_id FROM runs WHERE tenant = ${name})`,
    );
  }
  yield* tx.run(sql`DELETE FROM runs WHERE tenant = ${name}`);
  yield* tx.run(sql`DELETE FROM tenants WHERE name = ${name}`);
  // Its active runs end as cancelled: waiters and their workers must wake and stop.
  tx.changes.push(...tenantDeletedChanges(name, active));
  return true;
}

export function* createToken(tx: Writes, token: TokenRecord & { hash: string }): Op<TokenRecord> {
  yield* requireTenant(tx, token.tenant);
  const row = yield* tx.one<TokenRow>(
    sql`INSERT INTO tokens (id, tenant, name, hash, created_at)
        VALUES (${token.id}, ${token.tenant}, ${token.name}, ${token.hash},
                ${tokenCreatedAt(token, tx.now)})
        RETURNING *`,
  );
  return toTokenRecord(row as TokenRow);
}

export function* listTokens(db: Reads, tenant: string): Op<TokenRecord[]> {
  const rows = yield* db.rows<TokenRow>(
    sql`SELECT * FROM tokens WHERE tenant = ${tenant} ORDER BY created_at, id`,
  );
  return rows.map(toTokenRecord);
}

export function* deleteToken(tx: Writes, tenant: string, id: string): Op<boolean> {
  return (yield* tx.run(sql`DELETE FROM tokens WHERE tenant = ${tenant} AND id = ${id}`)) > 0;
}

export function* findToken(db: Reads, id: string): Op<TokenLookup | null> {
  const row = yield* db.one<TokenLookup>(sql`SELECT id, tenant, hash FROM tokens WHERE id = ${id}`);
  return row ?? null;
}
