// Steered turns, interrupts and forks through the Store interface on both backends
// (test/store-conformance/steering.suite.ts); PostgreSQL skips loudly without a server.

import { after, describe } from 'node:test';
import { skipUnlessPostgres } from './helpers/postgres.ts';
import { postgresFactory, sqliteFactory } from './helpers/store-factories.ts';
import { steeringSuite } from './store-conformance/steering.suite.ts';

describe('steering store [sqlite]', () => {
  const factory = sqliteFactory();
  after(() => factory.cleanup());
  steeringSuite(factory);
});

const skip = await skipUnlessPostgres('test/steering-store.test.ts');
describe('steering store [postgres]', { skip }, () => {
  if (skip) return;
  const factory = postgresFactory();
  after(() => factory.cleanup());
  steeringSuite(factory);
});
