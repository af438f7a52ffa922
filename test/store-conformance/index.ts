// The store conformance suite: one set of node:test blocks every backend runs
// unchanged. Usage (from a test file):
//
//   defineStoreConformance('sqlite', factory);
//
// It uses only the Store interface; the factory says how to get fresh databases, peer
// connections and restarts for the backend under test.

import { after, describe } from 'node:test';
import { capabilitiesSuite } from './capabilities.suite.ts';
import { claimSuite, enqueueSuite } from './enqueue-claim.suite.ts';
import { countQuotaSuite } from './count-quotas.suite.ts';
import { fairnessSuite } from './fairness.suite.ts';
import type { StoreFactory } from './harness.ts';
import { cancelSuite, fencingSuite, finalizeSuite } from './lifecycle.suite.ts';
import { mcpSuite } from './mcp.suite.ts';
import { memorySuite } from './memory.ts';
import { modelSuite } from './model.suite.ts';
import { outboxSuite } from './outbox.suite.ts';
import { resourceChangesSuite } from './resource-changes.suite.ts';
import { retentionSuite } from './retention.suite.ts';
import { storageQuotaSuite } from './storage-quota.suite.ts';
import { tenancySuite } from './tenancy.suite.ts';
import { webhookSuite } from './webhooks.suite.ts';
import { usageSuite } from './usage.suite.ts';

export type { StoreFactory, StoreOpenOptions } from './harness.ts';
export { TestClock } from './harness.ts';

export function defineStoreConformance(label: string, factory: StoreFactory): void {
  describe(`store conformance [${label}]`, () => {
    after(() => factory.cleanup());
    enqueueSuite(factory);
    claimSuite(factory);
    fairnessSuite(factory);
    countQuotaSuite(factory);
    storageQuotaSuite(factory);
    fencingSuite(factory);
    finalizeSuite(factory);
    cancelSuite(factory);
    tenancySuite(factory);
    outboxSuite(factory);
    modelSuite(factory);
    capabilitiesSuite(factory);
    memorySuite(factory);
    mcpSuite(factory);
    webhookSuite(factory);
    usageSuite(factory);
    resourceChangesSuite(factory);
    retentionSuite(factory);
  });
}
