// Approvals across kill -9, approve path (docs/approvals.md): a real `keel serve` child
// killed with SIGKILL after the request commits, while the run waits and after the
// decision commits, then restarted on the same data dir (helpers/approval-crash.ts). Each
// case: one request, one decision, the run ended once, exactly one execution (effect
// sink). Kills while the tool runs: crash-approvals-tools.test.ts; deny, timeout and the
// kills before the commits: crash-approvals-deny.test.ts (three files, each stays short).

import { describe, it } from 'node:test';
import { APPROVE_CASES, approvalCrashCases } from './helpers/approval-crash.ts';
import { effectSinkForSuite } from './helpers/crash-harness.ts';

describe('approvals across kill -9 [sqlite]', () => {
  const sink = effectSinkForSuite();

  it('every kill point: one request, one decision, one end, executions as decided', async () => {
    // One case at a time, on one data dir: the keel restarted after a case's kill is
    // armed with the next case's fault point (approvalCrashCases).
    const figures = await approvalCrashCases(APPROVE_CASES, sink());
    const kills = figures.reduce((sum, f) => sum + f.kills, 0);
    console.log(`approval crash [sqlite]: ${figures.length} cases, ${kills} kills`);
  });
});
