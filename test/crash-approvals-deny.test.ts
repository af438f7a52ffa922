// Approvals across kill -9, the other half (docs/approvals.md): a real `keel serve` child
// killed with SIGKILL, restarted on the same data dir (helpers/approval-crash.ts): deny
// and timeout (nothing runs; the model gets APPROVAL_DENIED with the note /
// APPROVAL_TIMEOUT), plus kills before the request and the decision commit. The approve
// path is crash-approvals.test.ts.

import { describe, it } from 'node:test';
import { DENY_CASES, approvalCrashCase } from './helpers/approval-crash.ts';
import { effectSinkForSuite, pool } from './helpers/crash-harness.ts';

describe('approvals across kill -9 [sqlite, deny]', () => {
  const sink = effectSinkForSuite();

  it('every kill point: one request, one decision, one end, executions as decided', async () => {
    // One at a time: each case starts keel twice, and a loaded machine starts slowly.
    const figures = await pool(
      1,
      DENY_CASES.map((c) => () => approvalCrashCase(c, sink())),
    );
    const kills = figures.reduce((sum, f) => sum + f.kills, 0);
    console.log(`approval crash [sqlite, deny]: ${figures.length} cases, ${kills} kills`);
  });
});
