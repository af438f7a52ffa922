// `npm run bench -- approvals`: what runs waiting for a person cost (docs/approvals.md,
// docs/benchmarks.md). A SQLite store with a real worker (concurrency 8, its 1 s poll and
// the approval timeout sweep) idles for a window with no runs, then with 10,000 runs
// `waiting` (each with a pending approval, half with a timeout far ahead). Reported: the
// process CPU time per idle second in both windows, the worker slots held, whether any
// run is claimable, and the time of one timeout sweep over the 10,000 pending approvals.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import pino from 'pino';
import { inertFailpoints } from '../src/failpoints.ts';
import { createMetrics } from '../src/metrics.ts';
import { createFixtureProvider } from '../src/providers/fixture.ts';
import { createProviderRegistry } from '../src/providers/registry.ts';
import { createWorker } from '../src/runtime/worker.ts';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import { newRunId } from '../src/ids.ts';
import { agentSpec } from '../test/helpers/agent-spec.ts';
import { formatNumber, formatTable, nowMs, writeResult } from './support.ts';

const WAITING = 10_000;
const IDLE_MS = 10_000;

/** CPU milliseconds (user + system) this process spends per second over `ms`. */
async function idleCpu(ms: number): Promise<number> {
  const before = process.cpuUsage();
  await delay(ms);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / (ms / 1000);
}

export async function runApprovalsBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-bench-approvals-'));
  const store = await openSqliteStore({ path: join(dir, 'keel.db'), durability: 'process' });
  const worker = createWorker({
    store,
    providers: createProviderRegistry({ fixture: createFixtureProvider() }),
    logger: pino({ level: 'silent' }),
    metrics: createMetrics(),
    failpoints: inertFailpoints,
    concurrency: 8,
    leaseMs: 30_000,
  });
  try {
    await store.createTenant('t', {});
    await store.putAgent('t', 'a', agentSpec({ require_approval: ['sink_*'] }));
    worker.start();
    await delay(1000);
    const cpuEmpty = await idleCpu(IDLE_MS);

    // The waiting runs, made through the store as the loop makes them: enqueue, claim,
    // request (one fenced transaction each). The worker is stopped meanwhile so it does
    // not run them itself.
    await worker.stop({ graceMs: 0 });
    const setupStart = nowMs();
    for (let i = 0; i < WAITING; i += 1) {
      const runId = newRunId();
      const input = { text: 'x' };
      await store.enqueueRun({
        run_id: runId,
        tenant: 't',
        agent: 'a',
        scope: `s${i}`,
        source: 'api',
        input,
        request_id: null,
        fingerprint: runId,
        delivery: null,
        on_busy: 'enqueue',
      });
      const claimed = await store.claimNextRun({ owner: 'setup', lease_ms: 30_000 });
      if (!claimed) throw new Error('setup: nothing to claim');
      await store.requestApproval(
        { run_id: claimed.run.run_id, attempt: claimed.run.attempt },
        {
          step: 1,
          call: { call_id: `c${i}`, name: 'sink_write', arguments: '{}' },
          timeout_ms: i % 2 === 0 ? 86_400_000 : null,
        },
      );
    }
    const setupMs = nowMs() - setupStart;
    const waitingWorker = createWorker({
      store,
      providers: createProviderRegistry({ fixture: createFixtureProvider() }),
      logger: pino({ level: 'silent' }),
      metrics: createMetrics(),
      failpoints: inertFailpoints,
      concurrency: 8,
      leaseMs: 30_000,
    });
    waitingWorker.start();
    await delay(1000);
    const cpuWaiting = await idleCpu(IDLE_MS);
    const slots = waitingWorker.activeRuns;
    const claimable = await store.claimNextRun({ owner: 'probe', lease_ms: 1000 });
    const sweepStart = nowMs();
    const settled = await store.expireApprovals(100);
    const sweepMs = nowMs() - sweepStart;
    const stats = await store.stats();
    await waitingWorker.stop({ graceMs: 0 });

    const result = {
      waiting_runs: stats.runs_by_status.waiting,
      idle_cpu_ms_per_s_empty: cpuEmpty,
      idle_cpu_ms_per_s_waiting: cpuWaiting,
      worker_slots_held: slots,
      claimable: claimable !== null,
      sweep_ms: sweepMs,
      sweep_settled: settled,
      setup_ms_per_run: setupMs / WAITING,
    };
    console.log(
      formatTable(
        [
          'waiting runs',
          'idle CPU ms/s (0 waiting)',
          'idle CPU ms/s (10k waiting)',
          'slots held',
          'claimable',
          'sweep ms',
        ],
        [
          [
            result.waiting_runs,
            formatNumber(cpuEmpty),
            formatNumber(cpuWaiting),
            slots,
            String(result.claimable),
            formatNumber(sweepMs),
          ],
        ],
      ),
    );
    console.log(`wrote ${writeResult('approvals', result)}`);
  } finally {
    await worker.stop({ graceMs: 0 });
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
