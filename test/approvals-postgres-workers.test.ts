// Approvals on PostgreSQL with two `keel serve` processes on one database
// (docs/approvals.md): a decision resumes the waiting run on whichever worker claims it —
// also on a process other than the one that asked, after that one was killed -9. Every
// run executes its approved call exactly once (effect sink) and ends once.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { postgresCrashBackend } from './helpers/crash-backend.ts';
import type { Served } from './helpers/crash-harness.ts';
import {
  call,
  effectSinkForSuite,
  serve,
  TENANT,
  tempDir,
  waitTerminal,
} from './helpers/crash-harness.ts';
import { skipUnlessPostgres } from './helpers/postgres.ts';
import { waitFor } from './helpers/wait-for.ts';

const skip = await skipUnlessPostgres('test/approvals-postgres-workers.test.ts');

async function submitWaiting(url: string, scopes: string[]): Promise<string[]> {
  const runIds: string[] = [];
  for (const scope of scopes) {
    const submitted = await call(url, 'POST', `/v1/tenants/${TENANT}/turns`, {
      agent: 'a',
      scope,
      payload: { text: `@call sink_write {"value":"${scope}"}\ngo` },
    });
    runIds.push(submitted.body.run_id as string);
  }
  for (const runId of runIds) {
    await waitFor(
      `run ${runId} waiting`,
      async () =>
        (await call(url, 'GET', `/v1/tenants/${TENANT}/runs/${runId}`)).body.run.status ===
        'waiting',
      { timeoutMs: 30_000, everyMs: 50 },
    );
  }
  return runIds;
}

async function approveAll(url: string, runIds: string[]): Promise<void> {
  for (const runId of runIds) {
    const listed = await call(url, 'GET', `/v1/tenants/${TENANT}/runs/${runId}/approvals`);
    const callId = listed.body.approvals[0].call_id as string;
    const decided = await call(
      url,
      'POST',
      `/v1/tenants/${TENANT}/runs/${runId}/approvals/${callId}`,
      { decision: 'approve' },
    );
    assert.equal(decided.status, 200, JSON.stringify(decided.body));
  }
}

/** The pid of the worker that claimed the run after its approval was decided. */
async function resumedBy(url: string, runId: string): Promise<{ asked: number; resumed: number }> {
  const trace = await call(url, 'GET', `/v1/tenants/${TENANT}/runs/${runId}/trace`);
  const events = trace.body.events as { type: string; data: { worker?: string } }[];
  const pidOf = (worker: string | undefined): number => Number(worker?.split(':')[1]);
  const decided = events.findIndex((e) => e.type === 'approval.decided');
  const askedClaim = events.slice(0, decided).findLast((e) => e.type === 'run.claimed');
  const resumedClaim = events.slice(decided).find((e) => e.type === 'run.claimed');
  return { asked: pidOf(askedClaim?.data.worker), resumed: pidOf(resumedClaim?.data.worker) };
}

describe('approvals with two workers [postgres]', { skip }, () => {
  const sink = effectSinkForSuite();
  const backend = postgresCrashBackend();
  after(() => backend.dropAll());

  it('a decision resumes the run on either worker, each call executed once', async () => {
    const dataA = tempDir();
    const env = { KEEL_TEST_EFFECT_SINK_URL: sink().url, ...backend.env(dataA) };
    let a: Served = await serve(dataA, env);
    let b: Served | null = null;
    try {
      await call(a.url, 'POST', '/v1/tenants', { name: TENANT });
      const agent = await call(a.url, 'PUT', `/v1/tenants/${TENANT}/agents/a`, {
        model: 'fixture/echo',
        require_approval: ['sink_write'],
      });
      assert.equal(agent.status, 201, JSON.stringify(agent.body));

      // Phase 1: A asks for every approval, then dies; the decisions go to B.
      const first = await submitWaiting(a.url, ['p1', 'p2', 'p3']);
      b = await serve(tempDir(), env);
      await a.kill();
      await approveAll(b.url, first);
      for (const runId of first) {
        assert.equal(await waitTerminal(b.url, runId), 'succeeded');
        const { asked, resumed } = await resumedBy(b.url, runId);
        assert.equal(asked, a.pid, 'A asked');
        assert.equal(resumed, b.pid, 'B resumed the run A asked for');
        assert.equal((await sink().effects(runId)).length, 1, 'executed once');
      }

      // Phase 2: both alive; decisions through A, resumed by whichever claims first.
      a = await serve(tempDir(), env);
      const second = await submitWaiting(b.url, ['q1', 'q2', 'q3', 'q4', 'q5', 'q6']);
      await approveAll(a.url, second);
      const resumedOn = new Map<number, number>();
      for (const runId of second) {
        assert.equal(await waitTerminal(a.url, runId), 'succeeded');
        const { resumed } = await resumedBy(a.url, runId);
        assert.ok(resumed === a.pid || resumed === b.pid, 'resumed by one of the two');
        resumedOn.set(resumed, (resumedOn.get(resumed) ?? 0) + 1);
        assert.equal((await sink().effects(runId)).length, 1, 'executed once');
      }
      console.log(
        `approvals two workers: phase 1 ${first.length} runs asked by A (killed) resumed by B; ` +
          `phase 2 resumed by A ${resumedOn.get(a.pid) ?? 0}, by B ${resumedOn.get(b.pid) ?? 0}`,
      );
    } finally {
      await a.kill();
      await b?.kill();
    }
  });
});
