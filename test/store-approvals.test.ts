// Approvals on both backends (test/store-conformance/approvals.suite.ts): examples, the
// timeout sweep with two sweepers, and the model-based test of the run state machine.

import { after, describe } from 'node:test';
import { approvalSuite } from './store-conformance/approvals.suite.ts';
import { postgresFactory, sqliteFactory } from './helpers/store-factories.ts';
import { skipUnlessPostgres } from './helpers/postgres.ts';

const sqlite = sqliteFactory();
describe('approvals [sqlite]', () => {
  after(() => sqlite.cleanup());
  approvalSuite(sqlite);
});

const skip = await skipUnlessPostgres('test/store-approvals.test.ts');
const postgres = postgresFactory('keel_appr');
describe('approvals [postgres]', { skip: skip || false }, () => {
  after(() => postgres.cleanup());
  if (!skip) approvalSuite(postgres, { numRuns: 40 });
});
