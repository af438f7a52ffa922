// Approvals across kill -9 on PostgreSQL (docs/approvals.md): the cases of
// crash-approvals*.test.ts (helpers/approval-crash.ts, the backend a parameter) with the
// data in a fresh schema per case — a real `keel serve` child killed with SIGKILL after
// the request commits, while the run waits, after the decision commits and after the
// approved tool ran, then restarted. A restarted process finds the killed one's lease
// live, so leases are 1 s (helpers/crash-backend.ts). Each case: one request, one
// decision, the run ended once, exactly one execution after approve (effect sink), none
// after deny or timeout. That the decision resumes the run on either of two processes
// is approvals-postgres-workers.test.ts.

import { after, describe, it } from 'node:test';
import { POSTGRES_CASES, approvalCrashCases } from './helpers/approval-crash.ts';
import { postgresCrashBackend } from './helpers/crash-backend.ts';
import { effectSinkForSuite } from './helpers/crash-harness.ts';
import { skipUnlessPostgres } from './helpers/postgres.ts';

const skip = await skipUnlessPostgres('test/crash-approvals-postgres.test.ts');

describe('approvals across kill -9 [postgres]', { skip }, () => {
  const sink = effectSinkForSuite();
  const backend = postgresCrashBackend();
  after(() => backend.dropAll());

  it('requested, waiting, decided, tool running: one request, one decision, one end, executions as decided', async () => {
    const started = Date.now();
    // One case at a time, on one data dir: the keel restarted after a case's kill is
    // armed with the next case's fault point (approvalCrashCases).
    const figures = await approvalCrashCases(POSTGRES_CASES, sink(), backend);
    const kills = figures.reduce((sum, f) => sum + f.kills, 0);
    console.log(
      `approval crash [postgres]: ${figures.length} cases, ${kills} kills, ${Date.now() - started} ms`,
    );
  });
});
