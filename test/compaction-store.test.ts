// A compacted turn's finalization on both backends (test/store-conformance/
// compaction.suite.ts); PostgreSQL skips loudly without a server.

import { after, describe } from 'node:test';
import { skipUnlessPostgres } from './helpers/postgres.ts';
import { postgresFactory, sqliteFactory } from './helpers/store-factories.ts';
import { compactionSuite } from './store-conformance/compaction.suite.ts';

describe('compaction store [sqlite]', () => {
  const factory = sqliteFactory();
  after(() => factory.cleanup());
  compactionSuite(factory);
});

const skip = await skipUnlessPostgres('test/compaction-store.test.ts');
describe('compaction store [postgres]', { skip }, () => {
  if (skip) return;
  const factory = postgresFactory('d19c');
  after(() => factory.cleanup());
  compactionSuite(factory);
});
