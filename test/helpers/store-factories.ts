// The conformance StoreFactory of each backend: SQLite files in fresh temp dirs, and a
// fresh PostgreSQL schema per store opened (peers and restarts reuse their primary's;
// a released schema is emptied and reused), all removed by cleanup().

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { StoreFactory, StoreOpenOptions } from '../store-conformance/harness.ts';
import type { SqliteStore } from '../../src/store/sqlite/index.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import type { PostgresStore } from '../../src/store/postgres/index.ts';
import { openPostgresStore } from '../../src/store/postgres/index.ts';
import type { Store } from '../../src/store/store.ts';
import { POSTGRES_URL, dropSchemas, freshSchemaName, wipeSchema } from './postgres.ts';

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

/**
 * Fresh PostgreSQL databases are schemas. Migrating a new schema costs far more than
 * emptying a used one, so schemas released by a finished test (all their stores
 * closed) are wiped and handed out again; a wiped schema has every table empty and
 * every sequence restarted, exactly as a freshly migrated one.
 */
export function postgresFactory(prefix = 'keel_conf'): StoreFactory {
  const schemas: string[] = [];
  const free: string[] = [];
  let opened = 0;
  const openStores = new Map<string, number>();
  const schemaOf = (store: Store): string => (store as PostgresStore).schema;
  let admin: pg.Client | null = null;
  const adminClient = async (): Promise<pg.Client> => {
    if (admin) return admin;
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    admin = client;
    return client;
  };
  const track = (store: PostgresStore): Store => {
    const schema = store.schema;
    openStores.set(schema, (openStores.get(schema) ?? 0) + 1);
    const close = store.close.bind(store);
    let closed = false;
    store.close = async () => {
      await close();
      if (closed) return;
      closed = true;
      openStores.set(schema, (openStores.get(schema) ?? 1) - 1);
    };
    return store;
  };
  const connect = async (schema: string, options: StoreOpenOptions): Promise<Store> =>
    track(await openPostgresStore({ url: POSTGRES_URL, schema, poolSize: 4, ...options }));
  return {
    async open(options = {}) {
      opened += 1;
      let schema = free.pop();
      if (schema === undefined) {
        schema = freshSchemaName(prefix);
        schemas.push(schema);
      }
      return connect(schema, options);
    },
    async openPeer(primary, options = {}) {
      return connect(schemaOf(primary), options);
    },
    async reopen(closed, options = {}) {
      return connect(schemaOf(closed), options);
    },
    async release(closed) {
      for (const schema of new Set(closed.map(schemaOf))) {
        if ((openStores.get(schema) ?? 0) > 0 || free.includes(schema)) continue;
        await wipeSchema(await adminClient(), schema);
        free.push(schema);
      }
    },
    async cleanup() {
      if (opened > 0) {
        console.log(
          `postgres factory ${prefix}: ${opened} fresh stores on ${schemas.length} migrated schemas`,
        );
      }
      await admin?.end();
      admin = null;
      free.length = 0;
      await dropSchemas(schemas.splice(0));
    },
  };
}
