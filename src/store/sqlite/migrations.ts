// Numbered forward migrations (docs/store.md, "Durability and migrations"):
// migrations/NNN_name.sql, read at run time, each applied in its own transaction and
// recorded in schema_migrations. A database that is newer than this code is refused;
// nothing ever resets data.

import type { Database as SqliteDatabase } from 'better-sqlite3';
import { fileURLToPath } from 'node:url';
import { KeelError } from '../../errors.ts';
import type { AppliedMigration, Migration } from '../migration-files.ts';
import { loadMigrationFiles } from '../migration-files.ts';

export type { AppliedMigration, Migration } from '../migration-files.ts';
import type { MigrationStatus } from '../store.ts';

/** First line of a migration that runs with foreign keys off (a table rebuild). */
const FOREIGN_KEYS_OFF = '-- keel:foreign-keys-off';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

export interface MigrationReport extends MigrationStatus {
  applied: AppliedMigration[];
  pending: { version: number; name: string }[];
}

export function loadMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  return loadMigrationFiles(dir);
}

function latestVersion(migrations: readonly Migration[]): number {
  return migrations.at(-1)?.version ?? 0;
}

function hasMigrationsTable(db: SqliteDatabase): boolean {
  return (
    db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
      .get() !== undefined
  );
}

function appliedMigrations(db: SqliteDatabase | null): AppliedMigration[] {
  if (db === null || !hasMigrationsTable(db)) return [];
  const rows = db
    .prepare('SELECT version, name, applied_at FROM schema_migrations ORDER BY version')
    .all() as { version: number; name: string; applied_at: number }[];
  return rows.map((row) => ({ ...row, applied_at: new Date(row.applied_at).toISOString() }));
}

function assertNotNewer(applied: readonly AppliedMigration[], latest: number, path: string): void {
  const current = applied.at(-1)?.version ?? 0;
  if (current > latest) {
    throw new KeelError(
      'STORE_SCHEMA_NEWER',
      `the database ${path} has schema version ${current}, but this keel knows only up to ${latest}: it was written by a newer keel; upgrade keel to open it`,
    );
  }
}

/** db null stands for a database file that does not exist yet. */
export function migrationReport(
  db: SqliteDatabase | null,
  migrations: readonly Migration[],
  path: string,
): MigrationReport {
  const applied = appliedMigrations(db);
  const latest = latestVersion(migrations);
  assertNotNewer(applied, latest, path);
  const done = new Set(applied.map((migration) => migration.version));
  return {
    current: applied.at(-1)?.version ?? 0,
    latest,
    applied,
    pending: migrations
      .filter((migration) => !done.has(migration.version))
      .map(({ version, name }) => ({ version, name })),
  };
}

/** Applies every pending migration, each in its own BEGIN IMMEDIATE transaction. */
export function applyMigrations(
  db: SqliteDatabase,
  migrations: readonly Migration[],
  path: string,
  now: () => number,
): MigrationReport {
  migrationReport(db, migrations, path);
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT',
  );
  for (const migration of migrations) {
    // A migration that rebuilds a table (SQLite cannot alter a CHECK in place) must not
    // fire ON DELETE CASCADE when it drops the old copy: foreign keys are off for it (the
    // pragma only works outside a transaction) and checked before it commits.
    const rebuild = migration.sql.startsWith(FOREIGN_KEYS_OFF);
    if (rebuild) db.pragma('foreign_keys = OFF');
    try {
      db.transaction(() => {
        // Re-read inside the write lock: a peer connection may have applied it meanwhile.
        const applied = appliedMigrations(db);
        assertNotNewer(applied, latestVersion(migrations), path);
        if (applied.some((done) => done.version === migration.version)) return;
        db.exec(migration.sql);
        if (rebuild && (db.pragma('foreign_key_check') as unknown[]).length > 0) {
          throw new Error(`migration ${migration.name} left foreign keys broken`);
        }
        db.prepare(
          'INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)',
        ).run(migration.version, migration.name, now());
      }).immediate();
    } finally {
      if (rebuild) db.pragma('foreign_keys = ON');
    }
  }
  return migrationReport(db, migrations, path);
}
