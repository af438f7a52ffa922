// The crash sweep and the random crash loop on PostgreSQL (they run on SQLite in
// crash-sweep.test.ts and crash-random.test.ts): the same scenarios and checks, with the
// data in a fresh schema per data dir (helpers/crash-backend.ts). A restarted process
// finds the killed one's leases live, so leases are 1 s and runs resume after expiry.
// Sizes are smaller than SQLite's to keep `npm test` short: the sweep covers one hit of
// each kind of point (the effectful call's intent, both sides of each tool kind, the
// commits around finalize); KEEL_TEST_CRASH_KILLS / KEEL_TEST_CRASH_TURNS lengthen the
// loop, KEEL_TEST_CRASH_SEED replays a plan.

import { after, describe, it } from 'node:test';
import { postgresCrashBackend } from './helpers/crash-backend.ts';
import type { FaultCase } from './helpers/crash-harness.ts';
import { effectSinkForSuite } from './helpers/crash-harness.ts';
import { crashSweep, randomCrashRun } from './helpers/crash-scenarios.ts';
import { skipUnlessPostgres } from './helpers/postgres.ts';

const FAULTS: FaultCase[] = [
  { point: 'submit.after_commit', hit: 1 },
  { point: 'claim.after_commit', hit: 1 },
  { point: 'model.after_response', hit: 1 },
  // 4: the effectful call's intent record; 9: a result mid-run; 19: the final answer.
  ...[4, 9, 19].map((hit) => ({ point: 'entry.after_commit', hit })),
  ...[1, 3].map((hit) => ({ point: 'tool.before_call', hit })),
  ...[1, 3].map((hit) => ({ point: 'tool.after_call', hit })),
  { point: 'finalize.before_commit', hit: 1 },
  { point: 'finalize.after_commit', hit: 1 },
];

const skip = await skipUnlessPostgres('test/crash-postgres.test.ts');

describe('crash tests [postgres]', { skip }, () => {
  const sink = effectSinkForSuite();
  const backend = postgresCrashBackend();
  after(() => backend.dropAll());

  it('sweep: every kind of loop fault point killed, restarted, invariants hold', () =>
    crashSweep(backend, FAULTS, sink));

  it('random SIGKILLs over many turns and scopes: invariants hold', () =>
    randomCrashRun(backend, { kills: 5, turns: 30, scopes: 6 }, sink));
});
