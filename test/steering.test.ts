// on_busy steer and interrupt against the real run loop, a real SQLite store and the
// fixture model: a steered turn joins the running run's journal at its next step
// boundary (the model answers it), a replay answers the same, an idle lane runs it as
// its own run, and interrupt cancels the running run so the new turn runs next.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { enqueueTurn } from '../src/runtime/enqueue.ts';
import type { Harness } from './runtime-harness.ts';
import { TENANT, openHarness, types } from './runtime-harness.ts';
import { waitFor } from './helpers/wait-for.ts';

describe('steering a busy conversation', () => {
  let h: Harness;
  before(async () => {
    h = await openHarness();
  });
  after(async () => {
    await h.close();
  });

  const turn = (scope: string, text: string, extra: Record<string, unknown> = {}) =>
    enqueueTurn(h.store, {
      tenant: TENANT,
      agent: 'a',
      scope,
      payload: { text },
      ...extra,
    });

  /** Waits until the run's first model call is under way (past its first boundary). */
  async function running(runId: string): Promise<void> {
    await waitFor(`run ${runId} calling the model`, async () =>
      types(await h.trace(runId)).includes('model.request'),
    );
  }

  it('a steered turn is journaled into the running run and answered there', async () => {
    const first = await turn('steer-1', '@sleep 300\n@call clock_now');
    await running(first.run.run_id);
    const steered = await turn('steer-1', '@reply make it Tuesday', {
      on_busy: 'steer',
      request_id: 'steer-1-b',
    });
    assert.equal(steered.run.run_id, first.run.run_id, 'answers with the running run');
    assert.equal(steered.run.status, 'running');
    assert.ok(steered.steer_id, 'the turn waits under a steer id');

    const run = await h.wait(first.run.run_id);
    assert.equal(run.status, 'succeeded');
    assert.match(String(run.output?.reply), /^make it Tuesday/, 'the model answered the steer');
    const entries = await h.store.loadEntries(run.run_id);
    assert.deepEqual(
      entries.map((entry) => entry.kind),
      ['user', 'assistant', 'tool_result', 'user', 'assistant'],
    );
    const user = entries[3];
    assert.equal(user?.kind === 'user' && user.body.steer_id, steered.steer_id);
    assert.ok(types(await h.trace(run.run_id)).includes('run.steered'));
    // The thread remembers the steered message with the run's turn, in order.
    const thread = await h.store.getThread(TENANT, 'a', 'steer-1');
    assert.deepEqual(
      thread?.messages.map((message) => [message.role, message.content.split('\n')[0]]),
      [
        ['user', '@sleep 300'],
        ['user', '@reply make it Tuesday'],
        ['assistant', 'make it Tuesday'],
      ],
    );
    // The turn left the queue: no run of its own, and the lane ran nothing else.
    assert.equal(await h.store.getRun(TENANT, steered.steer_id as string), null);
    const lane = await h.store.listRuns(TENANT, { scope: 'steer-1' }, 10);
    assert.equal(lane.items.length, 1);

    // A replay answers the same, without a second entry.
    const replay = await turn('steer-1', '@reply make it Tuesday', {
      on_busy: 'steer',
      request_id: 'steer-1-b',
    });
    assert.equal(replay.deduplicated, true);
    assert.equal(replay.run.run_id, run.run_id);
    assert.equal(replay.steer_id, steered.steer_id);
    assert.equal((await h.store.loadEntries(run.run_id)).length, entries.length);
    await assert.rejects(
      turn('steer-1', 'something else', { on_busy: 'steer', request_id: 'steer-1-b' }),
      { code: 'IDEMPOTENCY_KEY_REUSED' },
    );
  });

  it('with nothing running, a steered turn is simply the next run', async () => {
    const result = await turn('steer-2', 'hello', { on_busy: 'steer' });
    assert.equal(result.steer_id, undefined);
    const run = await h.wait(result.run.run_id);
    assert.deepEqual(run.output, { reply: 'echo: hello' });
  });

  it('interrupt cancels the running run at its next safe point; the new turn runs next', async () => {
    const first = await turn('steer-3', '@sleep 5000');
    await running(first.run.run_id);
    const second = await turn('steer-3', 'instead, this', { on_busy: 'interrupt' });
    assert.notEqual(second.run.run_id, first.run.run_id);
    const cancelled = await h.wait(first.run.run_id);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.error?.code, 'CANCELLED');
    assert.match(cancelled.error?.message ?? '', new RegExp(second.run.run_id));
    const next = await h.wait(second.run.run_id);
    assert.deepEqual(next.output, { reply: 'echo: instead, this' });
    // The interrupted run wrote nothing after the cancel: no model response recorded.
    const kinds = (await h.store.loadEntries(first.run.run_id)).map((entry) => entry.kind);
    assert.deepEqual(kinds, ['user']);
  });
});
