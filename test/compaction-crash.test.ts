// kill -9 during a compaction (docs/compaction.md): a real `keel serve` killed at the
// fault point `compaction.after_summary` (the summary exists, nothing is recorded yet)
// or `compaction.after_commit` (the summary and its record are committed, the step not
// yet taken); after the restart the run finishes with exactly one compaction, and the
// thread holds one summary plus the recent turns.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  TENANT,
  call,
  cleanup,
  serve,
  setupTenant,
  tempDir,
  waitTerminal,
} from './helpers/crash-harness.ts';
import { settledWithin } from './helpers/wait-for.ts';

const FILLER = 'harbour ledger violet quartz meadow copper lantern orbit pepper saddle ';

describe('compaction across kill -9', () => {
  after(cleanup);

  const cases = [
    ['between the summary and its commit', 'compaction.after_summary'],
    ['right after the compaction committed', 'compaction.after_commit'],
  ] as const;
  for (const [when, failpoint] of cases) {
    it(`killed ${when}: exactly one compaction after restart`, async () => {
      const dataDir = tempDir();
      const doomed = await serve(dataDir, {
        KEEL_TEST_FAILPOINTS: '1',
        KEEL_FAILPOINTS: `${failpoint}=kill`,
      });
      await setupTenant(doomed.url);
      const turn = async (url: string, text: string) => {
        const body = { agent: 'a', scope: 'c', payload: { text } };
        const submitted = await call(url, 'POST', `/v1/tenants/${TENANT}/turns`, body);
        assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
        return submitted.body.run_id as string;
      };
      // Six turns of ~400 tokens with the default budget: no compaction.
      for (let i = 1; i <= 6; i++) {
        assert.equal(
          await waitTerminal(doomed.url, await turn(doomed.url, `${i} ${FILLER.repeat(19)}`)),
          'succeeded',
        );
      }
      // A budget of 2000: the next turn folds the four oldest turns first (one compaction).
      const agent = await call(doomed.url, 'PUT', `/v1/tenants/${TENANT}/agents/a`, {
        model: 'fixture/echo',
        context_tokens: 2000,
        allowed_families: [],
      });
      assert.ok(agent.status < 300, JSON.stringify(agent.body));
      const runId = await turn(doomed.url, 'after the fold');
      const exit = await settledWithin(doomed.exited, 60_000);
      assert.equal(exit?.signal, 'SIGKILL', 'the fault point killed keel');

      const restarted = await serve(dataDir, {});
      try {
        assert.equal(await waitTerminal(restarted.url, runId), 'succeeded');
        const trace = await call(restarted.url, 'GET', `/v1/tenants/${TENANT}/runs/${runId}/trace`);
        const events = trace.body.events as { type: string; data: Record<string, unknown> }[];
        const compacted = events.filter((event) => event.type === 'context.compacted');
        assert.equal(compacted.length, 1, 'exactly one compaction');
        assert.equal(events.filter((event) => event.type === 'run.resumed').length, 1);
        const thread = await call(restarted.url, 'GET', `/v1/tenants/${TENANT}/threads/a/c`);
        const messages = thread.body.messages as { content: string; summary?: boolean }[];
        assert.equal(messages[0]?.summary, true);
        assert.equal(messages.filter((message) => message.summary).length, 1);
        assert.equal(messages.at(-2)?.content, 'after the fold');
        console.log(
          `compaction kill -9 at ${failpoint}: compactions=${compacted.length} folded_turns=${String(compacted[0]?.data.turns)} ` +
            `tokens_before=${String(compacted[0]?.data.tokens_before)} tokens_after=${String(compacted[0]?.data.tokens_after)} thread_messages=${messages.length}`,
        );
      } finally {
        await restarted.terminate();
      }
    });
  }
});
