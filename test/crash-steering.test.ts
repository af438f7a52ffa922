// Steering across kill -9 (docs/agent-loop.md, "Steering"; docs/reliability.md I13): a
// real `keel serve` child on SQLite, a turn steered into its running run, and the
// process killed with SIGKILL (a) before the step boundary read the steer (while the
// model call is under way) and (b) right after the boundary took it into the run's
// journal (`steer.after_take`), then restarted on the same data dir. Either way the
// steered message is answered exactly once: one user entry with its steer id in the
// running run, one `run.steered`, the model's final answer answers it, no run of its
// own, and a replay of its request_id answers the same run.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sqliteCrashBackend } from './helpers/crash-backend.ts';
import type { Served } from './helpers/crash-harness.ts';
import {
  call,
  cleanup,
  serve,
  setupTenant,
  TENANT,
  tempDir,
  waitTerminal,
} from './helpers/crash-harness.ts';
import { waitFor } from './helpers/wait-for.ts';

const T = `/v1/tenants/${TENANT}`;

type Kill = 'before_read' | 'after_take';

async function steerAcrossKill(kill: Kill): Promise<Record<string, unknown>> {
  const dataDir = tempDir('keel-steer-crash-');
  const faults: Record<string, string> =
    kill === 'after_take'
      ? { KEEL_TEST_FAILPOINTS: '1', KEEL_FAILPOINTS: 'steer.after_take=kill' }
      : {};
  let served: Served = await serve(dataDir, faults);
  await setupTenant(served.url);
  const first = await call(served.url, 'POST', `${T}/turns`, {
    agent: 'a',
    scope: 'steer',
    payload: { text: '@sleep 1500\nbook the flight' },
  });
  const runId = first.body.run_id as string;
  await waitFor(
    'the model call under way',
    async () => {
      const trace = await call(served.url, 'GET', `${T}/runs/${runId}/trace`);
      return trace.body.events.some((e: { type: string }) => e.type === 'model.request');
    },
    { timeoutMs: 30_000, everyMs: 20 },
  );
  const steerBody = {
    agent: 'a',
    scope: 'steer',
    payload: { text: '@reply make it Tuesday' },
    on_busy: 'steer',
    request_id: 'steer-crash',
  };
  const steered = await call(served.url, 'POST', `${T}/turns`, steerBody);
  assert.equal(steered.body.run_id, runId, JSON.stringify(steered.body));
  assert.equal(steered.body.steered, true);
  let kills = 0;
  if (kill === 'before_read') {
    await served.kill();
    kills += 1;
  } else {
    // The fault point kills the process once the boundary has taken the steer.
    await served.exited;
    kills += 1;
  }
  served = await serve(dataDir, {});
  try {
    assert.equal(await waitTerminal(served.url, runId), 'succeeded');
    const run = (await call(served.url, 'GET', `${T}/runs/${runId}`)).body.run;
    const trace = (await call(served.url, 'GET', `${T}/runs/${runId}/trace`)).body.events as {
      type: string;
    }[];
    const runs = (await call(served.url, 'GET', `${T}/runs?limit=100`)).body.runs as {
      scope: string;
    }[];
    const replay = await call(served.url, 'POST', `${T}/turns`, steerBody);
    await served.kill();
    const store = await sqliteCrashBackend.open(dataDir);
    const entries = await store.loadEntries(runId).finally(() => store.close());
    const steerEntries = entries.filter((e) => e.kind === 'user' && e.body.steer_id !== undefined);
    const figures = {
      kills,
      steer_entries: steerEntries.length,
      run_steered_events: trace.filter((e) => e.type === 'run.steered').length,
      runs_in_scope: runs.filter((r) => r.scope === 'steer').length,
      terminal_events: trace.filter((e) => e.type === 'run.succeeded').length,
      reply: run.output?.reply,
      replay_run: replay.body.run_id === runId,
      // Which attempt took the steer: the killed one (1) or the one after restart (2).
      taken_in_attempt: trace
        .slice(
          0,
          trace.findIndex((e) => e.type === 'run.steered'),
        )
        .filter((e) => e.type === 'run.claimed').length,
    };
    console.log(`steer crash [sqlite] ${kill}: ${JSON.stringify(figures)}`);
    assert.equal(figures.steer_entries, 1, 'the steered message journaled once');
    assert.equal(figures.run_steered_events, 1);
    assert.equal(figures.runs_in_scope, 1, 'no run of its own');
    assert.equal(figures.terminal_events, 1, 'the run ended once');
    assert.match(String(figures.reply), /^make it Tuesday/, 'the model answered it');
    assert.equal(figures.replay_run, true, 'a replay answers the same run');
    assert.equal(figures.taken_in_attempt, kill === 'before_read' ? 2 : 1, 'killed where named');
    return figures;
  } finally {
    await served.kill();
  }
}

describe('steering across kill -9 [sqlite]', () => {
  after(() => cleanup());

  it('killed before the boundary read the steer: answered once after restart', async () => {
    await steerAcrossKill('before_read');
  });

  it('killed right after the boundary took the steer: answered once after restart', async () => {
    await steerAcrossKill('after_take');
  });
});
