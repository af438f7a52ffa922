// Usage and budgets in the run loop (src/runtime/budgets.ts, src/store/rules/usage.ts):
// every model response's tokens and cost reach the usage ledger and the metrics; a run
// past its max_total_tokens or max_cost_usd fails BUDGET_EXCEEDED at the next step
// boundary; a tenant's daily budget stops a running run at its next boundary and
// refuses new turns, and the ledger always equals the journal's usage.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { after, before, describe, it } from 'node:test';
import { costOf, priceBook } from '../src/runtime/usage-prices.ts';
import type { Harness } from './runtime-harness.ts';
import { TENANT, openHarness } from './runtime-harness.ts';

const FOREVER = '@forever';

function day(): string {
  return new Date().toISOString().slice(0, 10);
}

/** The journal's usage of runs: the sum over their model calls' events. */
async function journalTokens(harness: Harness, runIds: string[]): Promise<[number, number]> {
  let calls = 0;
  let tokens = 0;
  for (const runId of runIds) {
    for (const event of await harness.trace(runId)) {
      if (event.type !== 'model.response' && event.type !== 'context.compacted') continue;
      const usage = event.data.usage as { input_tokens: number; output_tokens: number };
      calls += 1;
      tokens += usage.input_tokens + usage.output_tokens;
    }
  }
  return [calls, tokens];
}

describe('usage and budgets in the run loop', () => {
  let harness: Harness;
  before(async () => {
    // fixture/echo: 2 USD per million input tokens, 10 per million output tokens.
    harness = await openHarness({
      prices: priceBook({ fixture: { prices: { echo: { input: 2, output: 10 } } } }),
    });
  });
  after(() => harness.close());

  it('a run past max_total_tokens fails BUDGET_EXCEEDED at the next step boundary', async () => {
    await harness.putAgent('tokens', { max_total_tokens: 300, max_steps: 50 });
    const runId = await harness.submit(FOREVER, { agent: 'tokens', scope: 'tok' });
    const run = await harness.wait(runId);
    assert.equal(run.status, 'failed');
    assert.equal(run.error?.code, 'BUDGET_EXCEEDED');
    assert.match(run.error?.message ?? '', /max_total_tokens \(300\)/);
    const [calls, tokens] = await journalTokens(harness, [runId]);
    const responses = (await harness.trace(runId)).filter((e) => e.type === 'model.response');
    const last = responses[responses.length - 1]?.data.usage as {
      input_tokens: number;
      output_tokens: number;
    };
    // It stopped at the first boundary at or past the budget, not one step later.
    assert.ok(tokens >= 300, `tokens ${tokens}`);
    assert.ok(tokens - last.input_tokens - last.output_tokens < 300, `stopped late: ${tokens}`);
    assert.ok(calls >= 2, `calls ${calls}`);
    assert.equal(run.usage.input_tokens + run.usage.output_tokens, tokens);
    console.log(`max_total_tokens 300: stopped after ${calls} model calls, ${tokens} tokens`);
  });

  it('a run past max_cost_usd fails BUDGET_EXCEEDED; the event, ledger and metrics carry the cost', async () => {
    await harness.putAgent('cost', { max_cost_usd: 0.0002, max_steps: 50 });
    const runId = await harness.submit(FOREVER, { agent: 'cost', scope: 'cost' });
    const run = await harness.wait(runId);
    assert.equal(run.error?.code, 'BUDGET_EXCEEDED');
    assert.match(run.error?.message ?? '', /max_cost_usd/);
    const responses = (await harness.trace(runId)).filter((e) => e.type === 'model.response');
    let expected = 0;
    for (const response of responses) {
      const usage = response.data.usage as { input_tokens: number; output_tokens: number };
      const cost = (usage.input_tokens * 2 + usage.output_tokens * 10) / 1e6;
      assert.equal(response.data.model, 'fixture/echo');
      assert.ok(Math.abs(Number(response.data.cost_usd) - cost) < 1e-12);
      expected += cost;
    }
    assert.ok(expected >= 0.0002, `cost ${expected}`);
    const usage = await harness.store.getUsage(TENANT, { from: day(), to: day(), group_by: 'run' });
    const row = usage.rows.find((r) => r.key === runId);
    assert.ok(row && Math.abs(row.cost_usd - expected) < 1e-12, JSON.stringify(row));
    const metrics = await harness.metrics.registry.metrics();
    assert.match(metrics, /keel_model_tokens_total\{model="fixture\/echo",kind="input"\} \d+/);
    assert.match(metrics, /keel_model_cost_usd_total\{model="fixture\/echo"\} [0-9.e-]+/);
  });

  it("the tenant's daily budget stops a running run at its next boundary and refuses new turns", async () => {
    await harness.putAgent('daily', { max_steps: 50 });
    const before = await harness.store.getBudgetState(TENANT, 'none');
    // Room for a few more steps of today's usage, not for a run that never ends.
    await harness.store.putTenantBudget(TENANT, {
      daily_tokens: before.today.total_tokens + 300,
      daily_cost_usd: null,
    });
    const runId = await harness.submit(FOREVER, { agent: 'daily', scope: 'daily' });
    const run = await harness.wait(runId);
    assert.equal(run.error?.code, 'BUDGET_EXCEEDED');
    assert.match(run.error?.message ?? '', /daily_tokens/);
    await assert.rejects(
      harness.submit('hello', { agent: 'daily', scope: 'next' }),
      (error: { code?: string }) => error.code === 'BUDGET_EXCEEDED',
    );
    await harness.store.putTenantBudget(TENANT, { daily_tokens: null, daily_cost_usd: null });
    const ok = await harness.wait(await harness.submit('hello', { agent: 'daily', scope: 'next' }));
    assert.equal(ok.status, 'succeeded');
  });

  it("a compaction's summary call is billed like a response (context.compacted carries model and cost)", async () => {
    await harness.putAgent('long', { context_tokens: 400, allowed_families: [] });
    const words = (n: number) => Array.from({ length: 120 }, (_, i) => `word${n}x${i}`).join(' ');
    let compacted: { model?: unknown; cost_usd?: unknown; usage?: unknown } | undefined;
    for (let turn = 0; turn < 8 && !compacted; turn += 1) {
      const runId = await harness.submit(words(turn), { agent: 'long', scope: 'long' });
      assert.equal((await harness.wait(runId)).status, 'succeeded');
      compacted = (await harness.trace(runId)).find((e) => e.type === 'context.compacted')?.data;
    }
    assert.ok(compacted, 'a compaction happened within 8 long turns');
    assert.equal(compacted.model, 'fixture/echo');
    assert.ok(typeof compacted.cost_usd === 'number' && compacted.cost_usd > 0);
  });

  it("the ledger's totals equal the journal's usage of every run", async () => {
    const runs = (await harness.store.listRuns(TENANT, {}, 200)).items.map((run) => run.run_id);
    const [calls, tokens] = await journalTokens(harness, runs);
    const total = (
      await harness.store.getUsage(TENANT, { from: day(), to: day(), group_by: 'agent' })
    ).total;
    assert.equal(total.model_calls, calls);
    assert.equal(total.total_tokens, tokens);
    console.log(
      `ledger = journal: ${calls} model calls, ${tokens} tokens over ${runs.length} runs`,
    );
  });
});

describe('[providers.x.prices]', () => {
  function configWith(toml: string) {
    const dir = mkdtempSync(join(tmpdir(), 'keel-prices-'));
    try {
      writeFileSync(join(dir, 'keel.toml'), toml);
      return loadConfig({}, {}, dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('prices are USD per million tokens per "provider/model"; a bad price names the key', () => {
    const config = configWith(
      '[providers.local]\ntype = "openai-compatible"\n[providers.local.prices]\n"m-1" = { input = 3, output = 15 }\n',
    );
    const prices = priceBook(config.providers);
    assert.deepEqual(prices('local/m-1'), { input: 3, output: 15 });
    assert.equal(prices('local/other'), null);
    assert.equal(
      costOf(prices('local/m-1'), { input_tokens: 1_000_000, output_tokens: 2 }),
      3.00003,
    );
    assert.equal(costOf(null, { input_tokens: 5, output_tokens: 5 }), 0);
    assert.throws(
      () =>
        configWith(
          '[providers.local]\ntype = "openai-compatible"\n[providers.local.prices]\n"m" = { input = -1, output = 1 }\n',
        ),
      (error: Error & { code?: string }) =>
        error.code === 'CONFIG_INVALID' && /providers\.local\.prices\.m\.input/.test(error.message),
    );
  });
});
