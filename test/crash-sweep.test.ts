// The crash sweep (docs/reliability.md, Invariants): for each fault point of the loop
// a scripted run with several tool rounds — one effectful (sink_write), one idempotent
// (sink_put), two read-only — on a real `keel serve` is SIGKILLed there, restarted on the
// same data dir, and checked: I1, I3, I4, I5, I6, I9, I11 (crash-harness.ts), plus a
// cancelled variant for I7. Executions are counted by a separate effect-sink process.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import { sqliteCrashBackend } from './helpers/crash-backend.ts';
import type { FaultCase } from './helpers/crash-harness.ts';
import {
  TENANT,
  call,
  effectSinkForSuite,
  serve,
  setupTenant,
  tempDir,
  waitTerminal,
} from './helpers/crash-harness.ts';
import { crashSweep } from './helpers/crash-scenarios.ts';
import { waitFor } from './helpers/wait-for.ts';

// entry.after_commit counts every checkpoint of the run: 1 user entry; then per step
// model.request, assistant entry, tool.call intent, tool result (2–17); 18 the last
// model.request, 19 the final answer. The hits below land on each kind at least once.
const FAULTS: FaultCase[] = [
  { point: 'submit.after_commit', hit: 1 },
  { point: 'claim.after_commit', hit: 1 },
  { point: 'model.after_response', hit: 1 },
  { point: 'model.after_response', hit: 5 },
  ...[1, 2, 3, 4, 5, 9, 12, 16, 19].map((hit) => ({ point: 'entry.after_commit', hit })),
  ...[1, 2, 3, 4].map((hit) => ({ point: 'tool.before_call', hit })),
  ...[1, 2, 3, 4].map((hit) => ({ point: 'tool.after_call', hit })),
  { point: 'finalize.before_commit', hit: 1 },
  { point: 'finalize.after_commit', hit: 1 },
];

describe('crash sweep', () => {
  const sink = effectSinkForSuite();

  it('every loop fault point: killed, restarted, invariants hold', () =>
    crashSweep(sqliteCrashBackend, FAULTS, sink));

  it('I7: a cancel while a tool runs leaves no output, no context, no delivery', async () => {
    const dataDir = tempDir();
    const served = await serve(dataDir, { KEEL_TEST_EFFECT_SINK_URL: sink().url });
    let runId = '';
    try {
      await setupTenant(served.url);
      const submitted = await call(served.url, 'POST', `/v1/tenants/${TENANT}/turns`, {
        agent: 'a',
        scope: 'cancel',
        payload: { text: '@call sink_write {"value":"held","hold_ms":3000}' },
        delivery: { destination: 'test:cancel' },
      });
      runId = submitted.body.run_id as string;
      await waitFor('the tool started', async () => {
        const trace = await call(served.url, 'GET', `/v1/tenants/${TENANT}/runs/${runId}/trace`);
        return trace.body.events.some((e: { type: string }) => e.type === 'tool.call');
      });
      const cancelled = await call(
        served.url,
        'POST',
        `/v1/tenants/${TENANT}/runs/${runId}/cancel`,
      );
      assert.equal(cancelled.body.run.status, 'cancelled');
      assert.equal(await waitTerminal(served.url, runId), 'cancelled');
      // Room for a late write of the cancelled attempt to land, had the cancel not held:
      // waiting for something NOT to happen has no condition to wait on.
      await delay(200);
    } finally {
      await served.terminate();
    }
    const store = await openSqliteStore({ path: join(dataDir, 'keel.db'), durability: 'full' });
    try {
      const run = await store.getRun(TENANT, runId);
      assert.equal(run?.status, 'cancelled');
      assert.equal(run?.output, null);
      assert.equal(await store.getThread(TENANT, 'a', 'cancel'), null);
      assert.equal((await store.listDeliveries(TENANT, { run_id: runId }, 10)).items.length, 0);
      const entries = await store.loadEntries(runId);
      assert.ok(!entries.some((entry) => entry.kind === 'tool_result'), 'no result after cancel');
      const trace = (await store.getTrace(TENANT, runId, 0, 1000)) ?? [];
      assert.equal(trace[trace.length - 1]?.type, 'run.cancelled');
    } finally {
      await store.close();
    }
  });
});
