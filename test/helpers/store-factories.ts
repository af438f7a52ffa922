// The conformance StoreFactory of each backend: SQLite files in fresh temp dirs, and a
// fresh PostgreSQL schema per store opened (peers and restarts reuse their primary's),
// all removed by cleanup().

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import type { StoreFactory } from '../store-conformance/harness.ts';
import type { SqliteStore } from '../../src/store/sqlite/index.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import type { PostgresStore } from '../../src/store/postgres/index.ts';
import { openPostgresStore } from '../../src/store/postgres/index.ts';
import type { Store } from '../../src/store/store.ts';
import { POSTGRES_URL, dropSchemas, freshSchemaName } from './postgres.ts';

export function sqliteFactory(): StoreFactory {
  const root = mkdtempSync(join(os.tmpdir(), 'keel-store-conformance-'));
  let databases = 0;
  const pathOf = (store: Store): string => (store as SqliteStore).path;
  return {
    async open(options = {}) {
      databases += 1;
      const dir = join(root, `db-${databases}`);
      return openSqliteStore({ path: join(dir, 'keel.db'), durability: 'full', ...options });
    },
    async openPeer(primary, options = {}) {
      return openSqliteStore({
        path: pathOf(primary),
        durability: 'full',
        exclusiveLock: false,
        ...options,
      });
    },
    async reopen(closed, options = {}) {
      return openSqliteStore({ path: pathOf(closed), durability: 'full', ...options });
    },
    async cleanup() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}

export function postgresFactory(prefix = 'keel_conf'): StoreFactory {
  const schemas: string[] = [];
  const schemaOf = (store: Store): string => (store as PostgresStore).schema;
  return {
    async open(options = {}) {
      const schema = freshSchemaName(prefix);
      schemas.push(schema);
      return openPostgresStore({ url: POSTGRES_URL, schema, poolSize: 4, ...options });
    },
    async openPeer(primary, options = {}) {
      return openPostgresStore({
        url: POSTGRES_URL,
        schema: schemaOf(primary),
        poolSize: 4,
        ...options,
      });
    },
    async reopen(closed, options = {}) {
      return openPostgresStore({
        url: POSTGRES_URL,
        schema: schemaOf(closed),
        poolSize: 4,
        ...options,
      });
    },
    async cleanup() {
      await dropSchemas(schemas.splice(0));
    },
  };
}
