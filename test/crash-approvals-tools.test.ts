// Approvals across kill -9, while the approved tool runs (docs/approvals.md): killed
// before and after the approved call (sink_put: idempotent, re-run with its key; sink_write:
// effectful, never repeated — the model is told OUTCOME_UNKNOWN), restarted on the same
// data dir (helpers/approval-crash.ts): one request, one decision, one effect, one end.

import { describe, it } from 'node:test';
import { TOOL_CASES, approvalCrashCases } from './helpers/approval-crash.ts';
import { effectSinkForSuite } from './helpers/crash-harness.ts';

describe('approvals across kill -9 [sqlite, tool running]', () => {
  const sink = effectSinkForSuite();

  it('every kill point: one request, one decision, one end, executions as decided', async () => {
    // One case at a time, on one data dir: the keel restarted after a case's kill is
    // armed with the next case's fault point (approvalCrashCases).
    const figures = await approvalCrashCases(TOOL_CASES, sink());
    const kills = figures.reduce((sum, f) => sum + f.kills, 0);
    console.log(`approval crash [sqlite, tool running]: ${figures.length} cases, ${kills} kills`);
  });
});
