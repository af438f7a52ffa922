// Approvals across kill -9, the other half (docs/approvals.md): a real `keel serve` child
// killed with SIGKILL, restarted on the same data dir (helpers/approval-crash.ts): deny
// and timeout (nothing runs; the model gets APPROVAL_DENIED with the note /
// APPROVAL_TIMEOUT), plus kills before the request and the decision commit. The approve
// path is crash-approvals.test.ts.

import { describe, it } from 'node:test';
import { DENY_CASES, approvalCrashCases } from './helpers/approval-crash.ts';
import { effectSinkForSuite } from './helpers/crash-harness.ts';

describe('approvals across kill -9 [sqlite, deny]', () => {
  const sink = effectSinkForSuite();

  it('every kill point: one request, one decision, one end, executions as decided', async () => {
    // One case at a time, on one data dir: the keel restarted after a case's kill is
    // armed with the next case's fault point (approvalCrashCases).
    const figures = await approvalCrashCases(DENY_CASES, sink());
    const kills = figures.reduce((sum, f) => sum + f.kills, 0);
    console.log(`approval crash [sqlite, deny]: ${figures.length} cases, ${kills} kills`);
  });
});
