// Where the crash tests keep their data: SQLite (the data dir's keel.db; a restart
// resumes the killed process's runs at once) or PostgreSQL (one fresh schema per data
// dir, reached through KEEL_STORE_URL; a restart finds the killed process's leases live,
// so they are 2 s long and its runs resume after they expire). The checks open the
// stopped store through the same interface either way.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openPostgresStore } from '../../src/store/postgres/index.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import type { Store } from '../../src/store/store.ts';
import { dropSchemas, freshSchemaName, urlWithSchema } from './postgres.ts';

export interface CrashBackend {
  readonly name: 'sqlite' | 'postgres';
  /** `[workers]` settings the backend needs (lines), for a test that writes its own config. */
  readonly workerToml: string;
  /** Environment for every `keel serve` on this data dir. */
  env(dataDir: string): Record<string, string>;
  /** The store of a data dir, opened for the checks once its processes are gone. */
  open(dataDir: string): Promise<Store>;
  /** I10 on the stopped store: a problem, or null. */
  integrity(dataDir: string): Promise<string | null>;
  /**
   * Whether a live process may lose a run's lease: true where the test runs leases so
   * short (1–2 s) that a loaded machine can miss a heartbeat. The fence keeps such a
   * takeover safe (the other invariants check it), so it is counted, not a problem.
   */
  readonly shortLease: boolean;
}

export const sqliteCrashBackend: CrashBackend = {
  name: 'sqlite',
  workerToml: '',
  shortLease: false,
  env: () => ({}),
  open: (dataDir) => openSqliteStore({ path: join(dataDir, 'keel.db'), durability: 'full' }),
  async integrity(dataDir) {
    const raw = new Database(join(dataDir, 'keel.db'), { readonly: true });
    try {
      const integrity = raw.pragma('integrity_check', { simple: true });
      return integrity === 'ok' ? null : `I10: integrity_check says ${String(integrity)}`;
    } finally {
      raw.close();
    }
  },
};

/**
 * The lease the PostgreSQL crash tests run with: short, so a restart resumes soon, yet
 * twice the config's minimum, so a heartbeat delayed by a loaded CI machine rarely
 * lets it lapse.
 */
export const POSTGRES_CRASH_LEASE_MS = 2000;

/** PostgreSQL, a fresh schema per data dir; `dropAll` removes them (call it after). */
const POSTGRES_WORKER_TOML = `lease_ms = ${POSTGRES_CRASH_LEASE_MS}\n`;

export function postgresCrashBackend(): CrashBackend & { dropAll(): Promise<void> } {
  const schemas = new Map<string, string>();
  const schemaOf = (dataDir: string): string => {
    let schema = schemas.get(dataDir);
    if (!schema) {
      schema = freshSchemaName('keel_crash');
      schemas.set(dataDir, schema);
      writeFileSync(join(dataDir, 'keel.toml'), `[workers]\n${POSTGRES_WORKER_TOML}`);
    }
    return schema;
  };
  return {
    name: 'postgres',
    workerToml: POSTGRES_WORKER_TOML,
    shortLease: true,
    env: (dataDir) => ({
      KEEL_STORE_URL: urlWithSchema(schemaOf(dataDir)),
      KEEL_CONFIG: join(dataDir, 'keel.toml'),
    }),
    open: (dataDir) => openPostgresStore({ url: urlWithSchema(schemaOf(dataDir)), poolSize: 2 }),
    // PostgreSQL keeps its own pages consistent; nothing for keel to check beyond the
    // invariants above.
    integrity: async () => null,
    async dropAll() {
      await dropSchemas([...schemas.values()]);
      schemas.clear();
    },
  };
}
