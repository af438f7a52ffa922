// The store conformance suite on PostgreSQL: a fresh schema per store the suite opens
// (peers and restarts reuse their primary's schema), all dropped at the end. Skips
// loudly only when no server is reachable.

import { describe } from 'node:test';
import { defineStoreConformance } from './store-conformance/index.ts';
import { postgresFactory } from './helpers/store-factories.ts';
import { skipUnlessPostgres } from './helpers/postgres.ts';

const skip = await skipUnlessPostgres('test/store-postgres.test.ts');
if (skip) {
  describe('store conformance [postgres]', { skip }, () => undefined);
} else {
  defineStoreConformance('postgres', postgresFactory());
}
