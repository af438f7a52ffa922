// The random crash loop for SQLite (docs/reliability.md, Invariants): turns over many
// scopes on a real `keel serve`, SIGKILLed at random moments (no fault points) and
// restarted on the same data dir, then every run and scope checked (crash-loop.ts,
// crash-checks.ts). The seed is printed; KEEL_TEST_CRASH_SEED replays its plan, and
// KEEL_TEST_CRASH_KILLS / KEEL_TEST_CRASH_TURNS make a longer loop.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { effectSinkForSuite } from './helpers/crash-harness.ts';
import type { Figure } from './helpers/crash-checks.ts';
import { describeReport, randomCrashLoop } from './helpers/crash-loop.ts';

function fromEnv(name: string, fallback: number): number {
  const value = process.env[name];
  return value === undefined || value === '' ? fallback : Number(value);
}

describe('random crash loop', () => {
  const sink = effectSinkForSuite();

  it('random SIGKILLs over many turns and scopes: invariants hold', async () => {
    const seed = fromEnv('KEEL_TEST_CRASH_SEED', Math.floor(Math.random() * 2 ** 32));
    const report = await randomCrashLoop({
      seed,
      kills: fromEnv('KEEL_TEST_CRASH_KILLS', 10),
      turns: fromEnv('KEEL_TEST_CRASH_TURNS', 50),
      scopes: 8,
      sink: sink(),
    });
    console.log(describeReport('random[sqlite]', seed, report));
    const { findings } = report;
    assert.deepEqual(findings.problems, [], `seed ${seed}`);
    const mustBeZero: Figure[] = [
      'lost',
      'recorded_reexec',
      'dup_effects',
      'key_mismatch',
      'missing_effects',
      'resume_violations',
      'partial',
      'step_regressions',
      'overlaps',
      'fifo_violations',
      'run_count_errors',
      'fence_violations',
    ];
    for (const figure of mustBeZero) assert.equal(findings[figure], 0, `${figure}, seed ${seed}`);
    // The loop did real work: kills landed while runs were in flight.
    assert.ok(report.inFlightKills > 0, `no kill landed mid-run, seed ${seed}`);
  });
});
