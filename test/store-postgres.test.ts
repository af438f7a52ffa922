// The store conformance suite on PostgreSQL: a fresh schema per store the suite opens
// (peers and restarts reuse their primary's schema), all dropped at the end. Skips
// loudly only when no server is reachable.

import { describe } from 'node:test';
import type { StoreFactory } from './store-conformance/index.ts';
import { defineStoreConformance } from './store-conformance/index.ts';
import type { PostgresStore } from '../src/store/postgres/index.ts';
import { openPostgresStore } from '../src/store/postgres/index.ts';
import type { Store } from '../src/store/store.ts';
import {
  POSTGRES_URL,
  dropSchemas,
  freshSchemaName,
  skipUnlessPostgres,
} from './helpers/postgres.ts';

function postgresFactory(): StoreFactory {
  const schemas: string[] = [];
  const schemaOf = (store: Store): string => (store as PostgresStore).schema;
  return {
    async open(options = {}) {
      const schema = freshSchemaName('keel_conf');
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

const skip = await skipUnlessPostgres('test/store-postgres.test.ts');
if (skip) {
  describe('store conformance [postgres]', { skip }, () => undefined);
} else {
  defineStoreConformance('postgres', postgresFactory());
}
