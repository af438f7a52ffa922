// Numbered forward migrations per schema (docs/store.md, "Durability and
// migrations"): migrations/NNN_name.sql, each applied in its own transaction and
// recorded in that schema's schema_migrations. A transaction-scoped advisory lock per
// schema makes concurrent starters (several workers booting at once) apply each
// migration exactly once. A schema newer than this code is refused; nothing ever
// resets data.

import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { KeelError } from '../../errors.ts';
import type { AppliedMigration, Migration } from '../migration-files.ts';
import { loadMigrationFiles } from '../migration-files.ts';

export type { AppliedMigration, Migration } from '../migration-files.ts';
import { quoteIdent } from './context.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

export interface PostgresMigrationReport {
  current: number;
  latest: number;
  applied: AppliedMigration[];
  pending: { version: number; name: string }[];
}

export function loadMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  return loadMigrationFiles(dir);
}

async function appliedMigrations(
  client: pg.ClientBase,
  schema: string,
): Promise<AppliedMigration[]> {
  const table = await client.query(
    "SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'schema_migrations'",
    [schema],
  );
  if (table.rowCount === 0) return [];
  const rows = await client.query<{ version: number; name: string; applied_at: number }>(
    `SELECT version, name, applied_at FROM ${quoteIdent(schema)}.schema_migrations ORDER BY version`,
  );
  return rows.rows.map((row) => ({
    ...row,
    applied_at: new Date(Number(row.applied_at)).toISOString(),
  }));
}

function report(
  applied: AppliedMigration[],
  migrations: readonly Migration[],
  where: string,
): PostgresMigrationReport {
  const latest = migrations.at(-1)?.version ?? 0;
  const current = applied.at(-1)?.version ?? 0;
  if (current > latest) {
    throw new KeelError(
      'STORE_SCHEMA_NEWER',
      `the PostgreSQL schema ${where} has schema version ${current}, but this keel knows only up to ${latest}: it was written by a newer keel; upgrade keel to open it`,
    );
  }
  const done = new Set(applied.map((migration) => migration.version));
  return {
    current,
    latest,
    applied,
    pending: migrations
      .filter((migration) => !done.has(migration.version))
      .map(({ version, name }) => ({ version, name })),
  };
}

export async function migrationReport(
  client: pg.ClientBase,
  schema: string,
  migrations: readonly Migration[],
): Promise<PostgresMigrationReport> {
  return report(await appliedMigrations(client, schema), migrations, schema);
}

/** Applies every pending migration, each in its own transaction under the schema lock. */
export async function applyMigrations(
  client: pg.ClientBase,
  schema: string,
  migrations: readonly Migration[],
): Promise<PostgresMigrationReport> {
  await migrationReport(client, schema, migrations);
  const lock = `SELECT pg_advisory_xact_lock(hashtext('keel-migrate:' || $1))`;
  await client.query('BEGIN');
  try {
    await client.query(lock, [schema]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${quoteIdent(schema)}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`,
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
  for (const migration of migrations) {
    await client.query('BEGIN');
    try {
      await client.query(lock, [schema]);
      // Re-read under the lock: another process may have applied it meanwhile.
      const applied = report(await appliedMigrations(client, schema), migrations, schema).applied;
      if (!applied.some((done) => done.version === migration.version)) {
        await client.query(`SET LOCAL search_path TO ${quoteIdent(schema)}, public`);
        await client.query(migration.sql);
        await client.query(
          `INSERT INTO ${quoteIdent(schema)}.schema_migrations (version, name, applied_at)
           VALUES ($1, $2, floor(extract(epoch from now()) * 1000)::bigint)`,
          [migration.version, migration.name],
        );
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }
  return migrationReport(client, schema, migrations);
}
