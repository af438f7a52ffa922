// Numbered migration files (docs/store.md, "Durability and migrations"), the same rule
// for every backend: each backend keeps its own folder of NNN_name.sql files, numbered
// 001, 002, … without gaps.

import { readdirSync, readFileSync } from 'node:fs';

const FILE_PATTERN = /^(\d{3})_([a-z0-9_]+)\.sql$/;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export interface AppliedMigration {
  version: number;
  name: string;
  applied_at: string;
}

export function loadMigrationFiles(dir: string): Migration[] {
  const migrations = readdirSync(dir)
    .map((file) => ({ file, match: FILE_PATTERN.exec(file) }))
    .filter((entry) => entry.match !== null)
    .map(({ file, match }) => ({
      version: Number(match?.[1]),
      name: match?.[2] ?? file,
      sql: readFileSync(`${dir}/${file}`, 'utf8'),
    }))
    .sort((a, b) => a.version - b.version);
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(`migrations must be numbered 001, 002, … without gaps: ${migration.name}`);
    }
  });
  return migrations;
}
