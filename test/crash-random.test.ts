// The random crash loop for SQLite (docs/reliability.md, Invariants): turns over many
// scopes on a real `keel serve`, SIGKILLed at random moments (no fault points) and
// restarted on the same data dir, then every run and scope checked (crash-loop.ts,
// crash-checks.ts). The seed is printed; KEEL_TEST_CRASH_SEED replays its plan, and
// KEEL_TEST_CRASH_KILLS / KEEL_TEST_CRASH_TURNS make a longer loop.

import { describe, it } from 'node:test';
import { sqliteCrashBackend } from './helpers/crash-backend.ts';
import { effectSinkForSuite } from './helpers/crash-harness.ts';
import { randomCrashRun } from './helpers/crash-scenarios.ts';

describe('random crash loop', () => {
  const sink = effectSinkForSuite();

  it('random SIGKILLs over many turns and scopes: invariants hold', () =>
    randomCrashRun(sqliteCrashBackend, { kills: 10, turns: 50, scopes: 8 }, sink));
});
