// The two crash tests as functions of the backend, so the SQLite files (crash-sweep,
// crash-random) and the PostgreSQL file (crash-postgres) run the same scenario and the
// same checks; only the sizes and the fault list differ per backend.

import assert from 'node:assert/strict';
import type { CrashBackend } from './crash-backend.ts';
import type { Figure } from './crash-checks.ts';
import type { EffectSink, FaultCase, Findings } from './crash-harness.ts';
import { crashScenarioChain } from './crash-harness.ts';
import { describeReport, randomCrashLoop } from './crash-loop.ts';

/** Figures that must be 0 after any crash, whatever the backend. */
export const MUST_BE_ZERO: Figure[] = [
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

/** A number from the environment (empty or unset: the fallback). */
export function fromEnv(name: string, fallback: number): number {
  const value = process.env[name];
  return value === undefined || value === '' ? fallback : Number(value);
}

/**
 * The sweep: each fault kills a scripted run there, the process restarts on the same
 * data dir (crashScenarioChain), and the invariants are checked. Prints the figures,
 * asserts no problem, every MUST_BE_ZERO figure 0, and the effectful call uncertain
 * exactly where it was in flight.
 */
export async function crashSweep(
  backend: CrashBackend,
  faults: FaultCase[],
  sink: () => EffectSink,
): Promise<void> {
  const started = Date.now();
  // Two chains at a time (2 cores): most of a scenario is process start-up, which is
  // CPU-bound; more lanes only starve the other test files running beside this one. In a
  // chain the keel restarted after one kill is the next scenario's doomed process.
  const lanes = [0, 1].map((lane) => faults.filter((_, index) => index % 2 === lane));
  const findings = (
    await Promise.all(lanes.map((lane) => crashScenarioChain(lane, sink(), backend)))
  ).flat();
  const total = (key: keyof Omit<Findings, 'problems'>): number =>
    findings.reduce((sum, { found }) => sum + found[key], 0);
  const points = new Set(faults.map((fault) => fault.point)).size;
  console.log(
    `sweep[${backend.name}] points=${points} kills=${faults.length} lost=${total('lost')} ` +
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
  // The effectful call was in flight at tool.before_call#1, tool.after_call#1 and
  // entry.after_commit#4 (its intent): the model was told instead of a re-run.
  const uncertainAt = findings
    .filter(({ found }) => found.uncertain > 0)
    .map(({ fault }) => `${fault.point}#${fault.hit}`)
    .sort();
  assert.deepEqual(uncertainAt, [
    'entry.after_commit#4',
    'tool.after_call#1',
    'tool.before_call#1',
  ]);
}

/**
 * The random loop: SIGKILLs at random moments over many turns and scopes. The seed is
 * printed; KEEL_TEST_CRASH_SEED replays it, KEEL_TEST_CRASH_KILLS / KEEL_TEST_CRASH_TURNS
 * lengthen the loop (the sizes given are the defaults).
 */
export async function randomCrashRun(
  backend: CrashBackend,
  sizes: { kills: number; turns: number; scopes: number },
  sink: () => EffectSink,
): Promise<void> {
  const seed = fromEnv('KEEL_TEST_CRASH_SEED', Math.floor(Math.random() * 2 ** 32));
  const report = await randomCrashLoop({
    seed,
    kills: fromEnv('KEEL_TEST_CRASH_KILLS', sizes.kills),
    turns: fromEnv('KEEL_TEST_CRASH_TURNS', sizes.turns),
    scopes: sizes.scopes,
    sink: sink(),
    backend,
  });
  console.log(describeReport(`random[${backend.name}]`, seed, report));
  const { findings } = report;
  assert.deepEqual(findings.problems, [], `seed ${seed}`);
  for (const figure of MUST_BE_ZERO) assert.equal(findings[figure], 0, `${figure}, seed ${seed}`);
  // The loop did real work: kills landed while runs were in flight.
  assert.ok(report.inFlightKills > 0, `no kill landed mid-run, seed ${seed}`);
}
