// A SQLite file migrated only up to a given version, with tenant `t`: the starting point
// of a migration test that fills old tables and then applies the rest.

import Database from 'better-sqlite3';
import { applyMigrations, loadMigrations } from '../../src/store/sqlite/migrations.ts';

export function sqliteMigratedBefore(path: string, version: number): Database.Database {
  const db = new Database(path);
  db.pragma('foreign_keys = ON');
  applyMigrations(
    db,
    loadMigrations().filter((m) => m.version < version),
    path,
    Date.now,
  );
  const now = Date.now();
  db.prepare(
    'INSERT INTO tenants (name, metadata, created_at, updated_at) VALUES (?, ?, ?, ?)',
  ).run('t', '{}', now, now);
  return db;
}
