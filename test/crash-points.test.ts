// SIGKILL at the store's fault points the loop sweep does not reach (docs/reliability.md, Fault points:
// submit.before_commit, cancel.before_commit, outbox.claim.after_commit,
// outbox.ack.before_commit, schedule.fire.before_commit). Each scenario kills a real
// `keel serve` there, restarts it on the same data dir and checks what docs/reliability.md promises
// at that point: I1/I2 for the submit and the fire, I7 for the cancel, I8 for the outbox.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import { checkRequestIds, checkRun, emptyFindings, runsOfScope } from './helpers/crash-checks.ts';
import {
  TENANT,
  call,
  effectSinkForSuite,
  serve,
  setupTenant,
  tempDir,
  waitTerminal,
} from './helpers/crash-harness.ts';
import type { TraceEventOnWire } from './helpers/crash-points.ts';
import {
  deliveriesOf,
  emptyPointFigures,
  lifeKilledAt,
  sleep,
  traceOf,
  unanswered,
  untilTrace,
} from './helpers/crash-points.ts';
import { waitFor } from './helpers/wait-for.ts';

const TURNS = `/v1/tenants/${TENANT}/turns`;
const CLAIM = `/v1/tenants/${TENANT}/deliveries/claim`;
const ack = (id: string): string => `/v1/tenants/${TENANT}/deliveries/${id}/ack`;
const figures = emptyPointFigures();
const started = Date.now();

function killed(point: string): void {
  figures.points.add(point);
  figures.kills += 1;
}

/** I1, I6 (with a delivery), I9 from the stopped data dir: the run the request id names. */
async function checkOneRun(dataDir: string, scope: string, requestId: string, runId: string) {
  const found = emptyFindings();
  const store = await openSqliteStore({ path: join(dataDir, 'keel.db'), durability: 'full' });
  try {
    const runs = await runsOfScope(store, TENANT, scope);
    if (runs.length === 0) figures.lost += 1;
    figures.duplicated += Math.max(0, runs.length - 1);
    checkRequestIds(runs, [{ requestId, runId }], found);
    const checked = await checkRun(
      store,
      TENANT,
      { runId, destination: true, onUncertain: 'tell_model', effects: [] },
      found,
    );
    if (!checked) figures.lost += 1;
    figures.partial += found.partial;
  } finally {
    await store.close();
  }
  assert.deepEqual(found.problems, []);
}

/** A succeeded run with a delivery, in a fresh process on `dataDir`. */
async function succeededWithDelivery(url: string, scope: string): Promise<string> {
  await setupTenant(url);
  const submitted = await call(url, 'POST', TURNS, {
    agent: 'a',
    scope,
    payload: { text: 'to deliver' },
    delivery: { destination: 'test:outbox' },
  });
  const runId = submitted.body.run_id as string;
  assert.equal(await waitTerminal(url, runId), 'succeeded');
  return runId;
}

/** I8 at the end of an outbox scenario: one delivery row for the run, delivered on its
 * second attempt (the first claim expired with the killed process). */
async function assertDeliveredOnceAtAttempt2(url: string, runId: string): Promise<void> {
  const rows = await deliveriesOf(url, runId);
  figures.duplicated += Math.max(0, rows.length - 1);
  assert.deepEqual(
    rows.map((row) => [row.status, row.attempt]),
    [['delivered', 2]],
  );
}

describe('crash points', { concurrency: 2 }, () => {
  const sink = effectSinkForSuite();
  after(() => {
    console.log(
      `points[sqlite] points=${figures.points.size} kills=${figures.kills} lost=${figures.lost} ` +
        `duplicated=${figures.duplicated} stale_acks=${figures.stale_acks} ` +
        `partial=${figures.partial} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
    );
    assert.equal(figures.lost, 0, 'lost');
    assert.equal(figures.duplicated, 0, 'duplicated');
    assert.equal(figures.stale_acks, 0, 'stale_acks');
    assert.equal(figures.partial, 0, 'partial');
  });

  it('submit.before_commit: no run, no answer; the resubmit makes exactly one', async () => {
    const dataDir = tempDir();
    const scope = 'submit';
    const requestId = 'req-submit-before-commit';
    const body = {
      agent: 'a',
      scope,
      payload: { text: '@call calc_eval {"expression":"6*7"}\nsubmitted' },
      request_id: requestId,
      delivery: { destination: 'test:submit' },
    };
    await lifeKilledAt(dataDir, { point: 'submit.before_commit', hit: 1 }, {}, async (url) => {
      await setupTenant(url);
      await unanswered(url, 'POST', TURNS, body);
    });
    killed('submit.before_commit');
    const restarted = await serve(dataDir, {});
    let runId: string;
    try {
      const listed = await call(restarted.url, 'GET', `/v1/tenants/${TENANT}/runs?scope=${scope}`);
      assert.deepEqual(listed.body.runs, [], 'nothing of the killed submit was written');
      const again = await call(restarted.url, 'POST', TURNS, body);
      assert.equal(again.status, 202, 'the resubmit is a new run');
      runId = again.body.run_id as string;
      assert.equal(await waitTerminal(restarted.url, runId), 'succeeded');
      const replay = await call(restarted.url, 'POST', TURNS, body);
      assert.deepEqual([replay.status, replay.body.run_id], [200, runId]);
    } finally {
      await restarted.kill();
    }
    await checkOneRun(dataDir, scope, requestId, runId);
  });

  it('cancel.before_commit: the run resumes, a second cancel ends it with nothing written (I7)', async () => {
    const dataDir = tempDir();
    const scope = 'cancel';
    const env = { KEEL_TEST_EFFECT_SINK_URL: sink().url };
    // The second call holds the resumed run long enough to be cancelled while it runs.
    const script = [
      '@call sink_write {"value":"held","hold_ms":3000}',
      '@call sink_put {"value":"second","hold_ms":5000}',
    ].join('\n');
    let runId = '';
    await lifeKilledAt(dataDir, { point: 'cancel.before_commit', hit: 1 }, env, async (url) => {
      await setupTenant(url);
      const submitted = await call(url, 'POST', TURNS, {
        agent: 'a',
        scope,
        payload: { text: script },
        delivery: { destination: 'test:cancel' },
      });
      runId = submitted.body.run_id as string;
      await untilTrace(url, runId, (events) => events.some((e) => e.type === 'tool.call'), 'call');
      await unanswered(url, 'POST', `/v1/tenants/${TENANT}/runs/${runId}/cancel`);
    });
    killed('cancel.before_commit');
    const restarted = await serve(dataDir, env);
    const isSinkPut = (e: TraceEventOnWire): boolean =>
      e.type === 'tool.call' && e.data.name === 'sink_put';
    try {
      const resumedTrace = await untilTrace(
        restarted.url,
        runId,
        (events) => events.some(isSinkPut),
        'the resumed run reaching its second call',
      );
      assert.ok(!resumedTrace.some((e) => e.type === 'run.cancelled'), 'the cancel was undone');
      // on_uncertain_effect = tell_model: the effectful call in flight is not run again.
      const resumed = resumedTrace.find((e) => e.type === 'run.resumed');
      assert.equal((resumed?.data.uncertain_calls as string[] | undefined)?.length, 1);
      const cancelled = await call(
        restarted.url,
        'POST',
        `/v1/tenants/${TENANT}/runs/${runId}/cancel`,
      );
      assert.equal(cancelled.body.run.status, 'cancelled');
      assert.equal(await waitTerminal(restarted.url, runId), 'cancelled');
      // Long enough for an aborted sink_put to have written, had the cancel not held
      // (waiting for something NOT to happen has no condition to wait on).
      await sleep(300);
    } finally {
      await restarted.terminate();
    }
    const store = await openSqliteStore({ path: join(dataDir, 'keel.db'), durability: 'full' });
    try {
      const run = await store.getRun(TENANT, runId);
      const thread = await store.getThread(TENANT, 'a', scope);
      const deliveries = (await store.listDeliveries(TENANT, { run_id: runId }, 10)).items;
      const entries = await store.loadEntries(runId);
      const trace = (await store.getTrace(TENANT, runId, 0, 1000)) ?? [];
      const wrote =
        run?.output !== null ||
        thread !== null ||
        deliveries.length > 0 ||
        entries.some((e) => e.kind === 'tool_result' && e.body.name === 'sink_put') ||
        trace.filter((e) => e.type === 'run.cancelled').length !== 1 ||
        trace.at(-1)?.type !== 'run.cancelled';
      if (wrote) figures.partial += 1;
      assert.equal(run?.status, 'cancelled');
      assert.equal(run?.output, null);
      assert.equal(thread, null);
      assert.equal(deliveries.length, 0);
      assert.ok(!wrote, 'a cancelled run wrote nothing after its cancel');
    } finally {
      await store.close();
    }
    const effects = await sink().effects(runId);
    assert.ok(
      effects.filter((e) => e.tool === 'sink_write').length <= 1,
      'effectful call ran once',
    );
  });

  it('outbox.claim.after_commit: the unanswered claim holds until it expires, then is handed out again (I8)', async () => {
    const dataDir = tempDir();
    let runId = '';
    let claimedAt = 0;
    const leaseMs = 6000;
    await lifeKilledAt(dataDir, { point: 'outbox.claim.after_commit', hit: 1 }, {}, async (url) => {
      runId = await succeededWithDelivery(url, 'outbox-claim');
      claimedAt = Date.now();
      await unanswered(url, 'POST', CLAIM, { lease_ms: leaseMs });
    });
    killed('outbox.claim.after_commit');
    const restarted = await serve(dataDir, {});
    try {
      const [held] = await deliveriesOf(restarted.url, runId);
      if (!held) figures.lost += 1;
      assert.equal(held?.status, 'claimed', 'the claim committed before the kill');
      assert.equal(held.attempt, 1);
      const expiresAt = Date.parse(held.claim_expires_at ?? '');
      assert.ok(expiresAt > claimedAt && expiresAt <= claimedAt + leaseMs + 1000);
      const early = await call(restarted.url, 'POST', CLAIM, { lease_ms: leaseMs });
      const answeredAt = Date.now();
      // A slow restart may outlast the lease: then this claim is already the re-claim.
      if (early.body.deliveries.length > 0 && answeredAt < expiresAt) figures.duplicated += 1;
      assert.ok(
        early.body.deliveries.length === 0 || answeredAt >= expiresAt,
        'no second claim while the first one holds',
      );
      const again =
        early.body.deliveries.length > 0
          ? early
          : await waitFor(
              'the expired claim is claimable again',
              async () => {
                const answer = await call(restarted.url, 'POST', CLAIM, { lease_ms: leaseMs });
                if (answer.body.deliveries.length === 0) return null;
                if (Date.now() < expiresAt) figures.duplicated += 1;
                return answer;
              },
              { everyMs: 50 },
            );
      const [delivery] = again.body.deliveries;
      if (!delivery) figures.lost += 1;
      assert.equal(delivery?.delivery_id, held.delivery_id);
      assert.equal(delivery.attempt, 2, 'the expired claim counted as an attempt');
      const acked = await call(restarted.url, 'POST', ack(held.delivery_id), {
        claim_token: delivery.claim_token,
        outcome: 'delivered',
      });
      assert.equal(acked.body.delivery.status, 'delivered');
      await assertDeliveredOnceAtAttempt2(restarted.url, runId);
    } finally {
      await restarted.kill();
    }
  });

  it('outbox.ack.before_commit: the delivery stays claimed, the old token is refused after a re-claim (I8)', async () => {
    const dataDir = tempDir();
    let runId = '';
    let oldToken = '';
    let deliveryId = '';
    await lifeKilledAt(dataDir, { point: 'outbox.ack.before_commit', hit: 1 }, {}, async (url) => {
      runId = await succeededWithDelivery(url, 'outbox-ack');
      // The shortest lease: it has expired by the time the restarted process answers.
      const claimed = await call(url, 'POST', CLAIM, { lease_ms: 1000 });
      oldToken = claimed.body.deliveries[0].claim_token as string;
      deliveryId = claimed.body.deliveries[0].delivery_id as string;
      await unanswered(url, 'POST', ack(deliveryId), {
        claim_token: oldToken,
        outcome: 'delivered',
      });
    });
    killed('outbox.ack.before_commit');
    const restarted = await serve(dataDir, {});
    try {
      const [held] = await deliveriesOf(restarted.url, runId);
      if (!held) figures.lost += 1;
      assert.ok(held, 'the delivery row survived');
      assert.deepEqual([held.status, held.attempt], ['claimed', 1], 'the ack did not commit');
      const expiresAt = Date.parse(held.claim_expires_at ?? '');
      const again = await waitFor(
        'the expired claim is claimable again',
        async () => {
          const answer = await call(restarted.url, 'POST', CLAIM, { lease_ms: 5000 });
          if (answer.body.deliveries.length === 0) return null;
          if (Date.now() < expiresAt) figures.duplicated += 1;
          return answer;
        },
        { everyMs: 50 },
      );
      const [delivery] = again.body.deliveries;
      if (!delivery) figures.lost += 1;
      assert.equal(delivery?.delivery_id, deliveryId);
      assert.equal(delivery.attempt, 2);
      assert.notEqual(delivery.claim_token, oldToken);
      const stale = await call(restarted.url, 'POST', ack(deliveryId), {
        claim_token: oldToken,
        outcome: 'delivered',
      });
      if (stale.status < 400) figures.stale_acks += 1;
      assert.deepEqual([stale.status, stale.body.error?.code], [409, 'CLAIM_TOKEN_MISMATCH']);
      const acked = await call(restarted.url, 'POST', ack(deliveryId), {
        claim_token: delivery.claim_token,
        outcome: 'delivered',
      });
      assert.equal(acked.body.delivery.status, 'delivered');
      const twice = await call(restarted.url, 'POST', ack(deliveryId), {
        claim_token: delivery.claim_token,
        outcome: 'delivered',
      });
      if (twice.status < 400) figures.stale_acks += 1;
      assert.deepEqual([twice.status, twice.body.error?.code], [409, 'DELIVERY_NOT_CLAIMED']);
      await assertDeliveredOnceAtAttempt2(restarted.url, runId);
    } finally {
      await restarted.kill();
    }
  });

  it('schedule.fire.before_commit: after the restart the fire happens once, never twice', async () => {
    const dataDir = tempDir();
    const scope = 'scheduled';
    let fireAt = '';
    await lifeKilledAt(
      dataDir,
      { point: 'schedule.fire.before_commit', hit: 1 },
      {},
      async (url) => {
        await setupTenant(url);
        // `at` must be in the future when the schedule is written, so it is set only now.
        fireAt = new Date(Date.now() + 1500).toISOString();
        const put = await call(url, 'PUT', `/v1/tenants/${TENANT}/schedules/once`, {
          agent: 'a',
          scope,
          payload: { text: 'scheduled' },
          at: fireAt,
          delivery: { destination: 'test:schedule' },
        });
        assert.equal(put.status, 201);
      },
    );
    killed('schedule.fire.before_commit');
    const requestId = `schedule:once:${fireAt}`;
    const restarted = await serve(dataDir, {});
    let runId = '';
    try {
      const runsPath = `/v1/tenants/${TENANT}/runs?scope=${scope}`;
      runId = await waitFor('the fire happened after the restart', async () => {
        const listed = await call(restarted.url, 'GET', runsPath);
        return (listed.body.runs[0]?.run_id as string | undefined) ?? '';
      }).catch((error: unknown) => {
        figures.lost += 1;
        throw error;
      });
      assert.equal(await waitTerminal(restarted.url, runId), 'succeeded');
      // Two more scheduler ticks (1 s each): a second fire of the same time would show.
      // Waiting for something NOT to happen has no condition to wait on.
      await sleep(2200);
      const got = await call(restarted.url, 'GET', `/v1/tenants/${TENANT}/schedules/once`);
      assert.equal(got.body.schedule.next_fire_at, null, 'a one-shot schedule is spent');
      assert.equal(got.body.schedule.last_run_id, runId);
      const trace = await traceOf(restarted.url, runId);
      assert.equal(trace.filter((e) => e.type === 'run.queued').length, 1);
    } finally {
      await restarted.kill();
    }
    await checkOneRun(dataDir, scope, requestId, runId);
  });
});
