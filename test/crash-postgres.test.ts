// The crash sweep and the random crash loop on PostgreSQL (they run on SQLite in
// crash-sweep.test.ts and crash-random.test.ts): the same scenarios and checks, with the
// data in a fresh schema per data dir (helpers/crash-backend.ts). A restarted process
// finds the killed one's leases live, so leases are 1 s and runs resume after expiry.
// Sizes are smaller than SQLite's to keep `npm test` short: the sweep covers one hit of
// each kind of point (the effectful call's intent, both sides of each tool kind, the
// commits around finalize); KEEL_TEST_CRASH_KILLS / KEEL_TEST_CRASH_TURNS lengthen the
// loop, KEEL_TEST_CRASH_SEED replays a plan.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { postgresCrashBackend } from './helpers/crash-backend.ts';
import type { Figure } from './helpers/crash-checks.ts';
import type { FaultCase, Findings } from './helpers/crash-harness.ts';
import { crashScenario, effectSinkForSuite, pool } from './helpers/crash-harness.ts';
import { describeReport, randomCrashLoop } from './helpers/crash-loop.ts';
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

const MUST_BE_ZERO: Figure[] = [
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

function fromEnv(name: string, fallback: number): number {
  const value = process.env[name];
  return value === undefined || value === '' ? fallback : Number(value);
}

const skip = await skipUnlessPostgres('test/crash-postgres.test.ts');

describe('crash tests [postgres]', { skip }, () => {
  const sink = effectSinkForSuite();
  const backend = postgresCrashBackend();
  after(() => backend.dropAll());

  it('sweep: every kind of loop fault point killed, restarted, invariants hold', async () => {
    const started = Date.now();
    const findings = await pool(
      2,
      FAULTS.map((fault) => async () => ({
        fault,
        found: await crashScenario(fault, sink(), {}, backend),
      })),
    );
    const total = (key: keyof Omit<Findings, 'problems'>): number =>
      findings.reduce((sum, { found }) => sum + found[key], 0);
    const points = new Set(FAULTS.map((fault) => fault.point)).size;
    console.log(
      `sweep[postgres] points=${points} kills=${FAULTS.length} lost=${total('lost')} ` +
        `recorded_reexec=${total('recorded_reexec')} dup_effects=${total('dup_effects')} ` +
        `overlap=${total('overlaps')} uncertain=${total('uncertain')} ` +
        `rerun_same_key=${total('rerun_same_key')} partial=${total('partial')} ` +
        `(${((Date.now() - started) / 1000).toFixed(1)} s)`,
    );
    const problems = findings.flatMap(({ fault, found }) =>
      found.problems.map((text) => `${fault.point}#${fault.hit}: ${text}`),
    );
    assert.deepEqual(problems, []);
    for (const key of MUST_BE_ZERO) assert.equal(total(key), 0, key);
    const uncertainAt = findings
      .filter(({ found }) => found.uncertain > 0)
      .map(({ fault }) => `${fault.point}#${fault.hit}`)
      .sort();
    assert.deepEqual(uncertainAt, [
      'entry.after_commit#4',
      'tool.after_call#1',
      'tool.before_call#1',
    ]);
  });

  it('random SIGKILLs over many turns and scopes: invariants hold', async () => {
    const seed = fromEnv('KEEL_TEST_CRASH_SEED', Math.floor(Math.random() * 2 ** 32));
    const report = await randomCrashLoop({
      seed,
      kills: fromEnv('KEEL_TEST_CRASH_KILLS', 5),
      turns: fromEnv('KEEL_TEST_CRASH_TURNS', 30),
      scopes: 6,
      sink: sink(),
      backend,
    });
    console.log(describeReport('random[postgres]', seed, report));
    const { findings } = report;
    assert.deepEqual(findings.problems, [], `seed ${seed}`);
    for (const figure of MUST_BE_ZERO) assert.equal(findings[figure], 0, `${figure}, seed ${seed}`);
    assert.ok(report.inFlightKills > 0, `no kill landed mid-run, seed ${seed}`);
  });
});
