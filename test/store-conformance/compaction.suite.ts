// A compacted turn through the Store interface (docs/compaction.md): the finalization
// that carries a run's folds rewrites the thread as one summary + the recent turns in
// the same transaction as the turn, with the turn's token counts; a fold whose run the
// thread no longer holds changes nothing.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SUMMARY_PREFIX } from '../../src/store/rules/threads.ts';
import type { Store } from '../../src/store/store.ts';
import type { StoreFactory } from './harness.ts';
import { AGENT, claimOrFail, fenceOf, StoreHarness, succeeded, TENANT, turn } from './harness.ts';

async function plainTurn(store: Store, text: string): Promise<string> {
  await store.enqueueRun(turn({ input: { text } }));
  const claimed = await claimOrFail(store);
  await store.finalizeRun(fenceOf(claimed), succeeded(`re ${text}`));
  return claimed.run.run_id;
}

export function compactionSuite(factory: StoreFactory): void {
  describe('compaction at finalize', () => {
    const harness = new StoreHarness(factory);

    it('folds the turns through a run into one summary, then appends the counted turn', async () => {
      const { store } = await harness.fresh();
      await plainTurn(store, 'q1');
      const second = await plainTurn(store, 'q2');
      await plainTurn(store, 'q3');
      await store.enqueueRun(turn({ input: { text: 'q4' } }));
      const claimed = await claimOrFail(store);
      await store.finalizeRun(
        fenceOf(claimed),
        succeeded('re q4', {
          compactions: [{ through_run_id: second, summary: 'q1 and q2 happened' }],
          message_tokens: [2, 3],
        }),
      );
      const thread = await store.getThread(TENANT, AGENT, 's1');
      assert.equal(thread?.turns, 4);
      assert.deepEqual(
        thread?.messages.map((message) => [message.content, message.summary, message.tokens]),
        [
          [`${SUMMARY_PREFIX}q1 and q2 happened`, true, undefined],
          ['q3', undefined, undefined],
          ['re q3', undefined, undefined],
          ['q4', undefined, 2],
          ['re q4', undefined, 3],
        ],
      );
      assert.equal(thread?.messages[0]?.run_id, second);
    });

    it('a fold of a run the thread does not hold changes nothing', async () => {
      const { store } = await harness.fresh();
      await plainTurn(store, 'q1');
      await store.enqueueRun(turn({ input: { text: 'q2' } }));
      const claimed = await claimOrFail(store);
      await store.finalizeRun(
        fenceOf(claimed),
        succeeded('re q2', { compactions: [{ through_run_id: 'run_gone', summary: 'x' }] }),
      );
      const thread = await store.getThread(TENANT, AGENT, 's1');
      assert.deepEqual(
        thread?.messages.map((message) => message.content),
        ['q1', 're q1', 'q2', 're q2'],
      );
    });
  });
}
