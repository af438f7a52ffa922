// Compaction (docs/compaction.md): a long conversation stays within context_tokens —
// every model input fits (counted from the recorded requests with the tokenizer), no
// turn fails, the thread holds a summary plus recent turns; a provider's "context length
// exceeded" gets one compaction and one retry, never a loop; the fold rule and the
// providers' error mapping.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { APICallError } from '@ai-sdk/provider';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { toProviderError } from '../src/providers/provider-errors.ts';
import type { ModelRequest } from '../src/providers/provider.ts';
import { SUMMARY_REQUEST_MARKER } from '../src/providers/provider.ts';
import { fixtureSummary } from '../src/providers/fixture-script.ts';
import { SUMMARY_PREFIX, foldMessages } from '../src/store/rules/threads.ts';
import { createKeelClient } from '../src/client/index.ts';
import { EventPrinter } from '../src/cli/event-printer.ts';
import { startFixtureServer } from '../src/providers/fixture-server.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import { contextBudget, entryText } from '../src/runtime/token-count.ts';
import type { ThreadMessage } from '../src/types.ts';
import type { Harness } from './runtime-harness.ts';
import { TENANT, openHarness } from './runtime-harness.ts';

const WORDS = [
  'harbour',
  'ledger',
  'violet',
  'quartz',
  'meadow',
  'copper',
  'lantern',
  'orbit',
  'pepper',
  'saddle',
  'thunder',
  'willow',
  'anchor',
  'biscuit',
  'cobalt',
  'dolphin',
  'ember',
  'falcon',
  'granite',
  'hollow',
  'indigo',
  'juniper',
  'kettle',
  'lemon',
  'marble',
  'nectar',
  'oyster',
];

/** A deterministic long message (~`chars` characters) the tokenizer cannot squeeze. */
function longText(seed: number, chars: number): string {
  const words: string[] = [`turn ${seed}:`];
  let length = 0;
  for (let i = 0; length < chars; i++) {
    const word = WORDS[(seed * 7 + i * 13 + ((i * i) % 11)) % WORDS.length] as string;
    words.push(word);
    length += word.length + 1;
  }
  return words.join(' ');
}

/** The exact tokens of a recorded request, counted independently of keel's counter. */
function requestTokens(request: ModelRequest): number {
  let total = countTokens(request.system) + 4;
  if (request.tools.length > 0) total += countTokens(JSON.stringify(request.tools));
  for (const message of request.context) total += countTokens(message.content) + 4;
  for (const entry of request.entries) total += countTokens(entryText(entry)) + 4;
  return total;
}

const summarising = (request: ModelRequest) => request.system.startsWith(SUMMARY_REQUEST_MARKER);

describe('compaction', () => {
  let h: Harness;
  before(async () => {
    h = await openHarness();
  });
  after(async () => {
    await h.close();
  });

  it('200 turns of long messages within a small context_tokens: every input fits, none fails', async () => {
    const budget = 1_500;
    await h.putAgent('a', { context_tokens: budget, context_window: 1000, allowed_families: [] });
    const started = performance.now();
    const first = h.model.requests.length;
    let compactions = 0;
    for (let turn = 1; turn <= 200; turn++) {
      const runId = await h.submit(longText(turn, 600), { scope: 'long' });
      const run = await h.wait(runId, 30_000);
      assert.equal(run.status, 'succeeded', `turn ${turn}: ${JSON.stringify(run.error)}`);
      compactions += (await h.trace(runId)).filter((e) => e.type === 'context.compacted').length;
    }
    const requests = h.model.requests.slice(first);
    const turnRequests = requests.filter((request) => !summarising(request));
    const summaryRequests = requests.filter(summarising);
    const largest = Math.max(...requests.map(requestTokens));
    for (const request of requests) {
      assert.ok(requestTokens(request) <= budget, `an input of ${requestTokens(request)} tokens`);
    }
    assert.equal(turnRequests.length, 200, 'one model call per turn, none retried');
    assert.equal(summaryRequests.length, compactions);
    assert.ok(compactions >= 20, `${compactions} compactions`);

    const thread = await h.store.getThread(TENANT, 'a', 'long');
    const messages = thread?.messages ?? [];
    assert.equal(messages[0]?.summary, true, 'the thread starts with a summary');
    assert.ok(messages[0]?.content.startsWith(SUMMARY_PREFIX));
    assert.equal(messages.filter((message) => message.summary).length, 1);
    const recent = messages.slice(1);
    assert.ok(recent.length >= 2 && recent.length % 2 === 0, 'complete recent turns');
    assert.equal(recent.at(-2)?.content, longText(200, 600), 'the newest turn is kept');
    assert.ok(recent.every((message) => typeof message.tokens === 'number'));
    console.log(
      `compaction 200 turns: context_tokens=${budget} compactions=${compactions} ` +
        `largest_input=${largest} thread_messages=${messages.length} ` +
        `ms=${Math.round(performance.now() - started)}`,
    );
  });

  it('"context length exceeded" → one compaction, one retry, success', async () => {
    await h.putAgent('a', { allowed_families: [] });
    for (let turn = 1; turn <= 5; turn++) {
      const run = await h.wait(await h.submit(longText(turn, 2_000), { scope: 'ovf' }));
      assert.equal(run.status, 'succeeded');
    }
    const first = h.model.requests.length;
    const runId = await h.submit('@overflow 1500\nafter the refusal', { scope: 'ovf' });
    const run = await h.wait(runId);
    assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
    assert.deepEqual(run.output, { reply: 'echo: after the refusal' });
    const events = await h.trace(runId);
    const compacted = events.filter((e) => e.type === 'context.compacted');
    assert.equal(compacted.length, 1);
    assert.equal(compacted[0]?.data.reason, 'context_length_exceeded');
    assert.equal(compacted[0]?.data.step, 1);
    const calls = h.model.requests.slice(first);
    // refused call, summary, retried call
    assert.deepEqual(calls.map(summarising), [false, true, false]);
    assert.equal(events.filter((e) => e.type === 'model.response').length, 1);
    const thread = await h.store.getThread(TENANT, 'a', 'ovf');
    assert.equal(thread?.messages[0]?.summary, true);
  });

  it('a second refusal of the same step fails CONTEXT_EXCEEDED after one compaction', async () => {
    const run = await h.wait(await h.submit('@overflow 10\nnever fits', { scope: 'ovf' }));
    assert.equal(run.status, 'failed');
    assert.equal(run.error?.code, 'CONTEXT_EXCEEDED');
    const events = await h.trace(run.run_id);
    assert.equal(events.filter((e) => e.type === 'context.compacted').length, 1);
    assert.equal(events.filter((e) => e.type === 'model.request').length, 2);
  });

  it('a refusal with nothing to fold fails at once', async () => {
    const run = await h.wait(await h.submit('@overflow 10\nfresh', { scope: 'empty' }));
    assert.equal(run.error?.code, 'CONTEXT_EXCEEDED');
    assert.equal(
      (await h.trace(run.run_id)).filter((e) => e.type === 'context.compacted').length,
      0,
    );
  });
});

describe('compaction over the openai-compatible wire (keel fixture-model --listen)', () => {
  it('the refusal maps to CONTEXT_EXCEEDED: one compaction summarised over the wire, one retry', async () => {
    const model = await startFixtureServer();
    const keel = await startTestKeel({
      toml: `[memory]\nembedder = "hash"\n[providers.local]\ntype = "openai-compatible"\nbase_url = "${model.url}/v1"\n`,
    });
    try {
      const client = createKeelClient({ baseUrl: keel.url });
      await client.tenants.create({ name: 'cw' });
      await client.agents.put('cw', 'a', {
        model: 'local/fixture',
        allowed_families: [],
      });
      const runTurn = async (text: string) => {
        const body = { agent: 'a', scope: 'w', payload: { text } };
        const created = await client.turns.submit('cw', body);
        const done = await client.turns.wait('cw', created.run_id, 20_000);
        const trace = await client.runs.trace('cw', created.run_id);
        return {
          run: done.run,
          events: trace.events as unknown as { type: string; data: Record<string, unknown> }[],
        };
      };
      for (let turn = 1; turn <= 5; turn++) {
        assert.equal((await runTurn(longText(turn, 2_000))).run.status, 'succeeded');
      }
      const before = model.stats.requests;
      const { run, events } = await runTurn('@overflow 1500\nover the wire');
      assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
      const compacted = events.filter((e) => e.type === 'context.compacted');
      assert.equal(compacted.length, 1);
      assert.equal(compacted[0]?.data.reason, 'context_length_exceeded');
      assert.equal(model.stats.requests - before, 3, 'refused, summary, retried');
      const thread = await client.threads.get('cw', 'a', 'w');
      assert.match(
        String((thread.messages as { content: unknown }[])[0]?.content),
        /^\[keel\] Summary of the earlier conversation: summary of \d+ messages/,
      );
    } finally {
      await keel.close();
      await model.close();
    }
  });
});

describe('compaction rules', () => {
  const message = (run: string, role: 'user' | 'assistant', content: string): ThreadMessage => ({
    role,
    content,
    run_id: run,
    ts: `2026-01-01T00:00:0${run.slice(1)}.000Z`,
  });
  const thread = [
    message('r1', 'user', 'a'),
    message('r1', 'assistant', 'b'),
    message('r2', 'user', 'c'),
    message('r2', 'assistant', 'd'),
    message('r3', 'user', 'e'),
    message('r3', 'assistant', 'f'),
  ];

  it('foldMessages replaces the turns through a run by one summary; a missing run is a no-op', () => {
    const folded = foldMessages(thread, { through_run_id: 'r2', summary: 'S' });
    assert.deepEqual(folded[0], {
      role: 'user',
      content: `${SUMMARY_PREFIX}S`,
      run_id: 'r2',
      ts: thread[3]?.ts,
      summary: true,
    });
    assert.deepEqual(folded.slice(1), thread.slice(4));
    // A second fold takes the first summary with it.
    const again = foldMessages(folded, { through_run_id: 'r3', summary: 'T' });
    assert.deepEqual(
      again.map((m) => m.content),
      [`${SUMMARY_PREFIX}T`],
    );
    assert.deepEqual(foldMessages(thread, { through_run_id: 'gone', summary: 'X' }), thread);
  });

  it('keel turn --stream / keel chat print a compaction as one line', () => {
    let out = '';
    const printer = new EventPrinter((text) => (out += text));
    printer.take({
      type: 'context.compacted',
      data: {
        step: 3,
        reason: 'budget',
        from_run_id: 'r1',
        through_run_id: 'r4',
        turns: 4,
        messages: 8,
        tokens_before: 2446,
        tokens_after: 922,
        context_tokens: 2000,
        usage: { input_tokens: 2000, output_tokens: 80 },
        latency_ms: 12,
      },
      seq: 7,
      ts: '2026-01-01T00:00:00.000Z',
    });
    assert.equal(out, '  (context compacted: 4 older turns summarised, ~2446 → ~922 tokens)\n');
  });

  it('the fixture summary is deterministic and names what it folded', () => {
    const transcript = 'user: hello there\n\nassistant: hi\n\nuser: bye now';
    assert.equal(fixtureSummary(transcript), fixtureSummary(transcript));
    assert.equal(
      fixtureSummary(transcript),
      'summary of 3 messages: 2 from the user, first "hello there", last "bye now"',
    );
  });

  it('context_tokens defaults to the model window minus max_tokens', () => {
    assert.equal(contextBudget({ model: 'fixture/echo', max_tokens: 4096 }), 32_768 - 4096);
    assert.equal(contextBudget({ model: 'openai/gpt-4.1-mini', max_tokens: 1000 }), 1_046_576);
    assert.equal(contextBudget({ model: 'x/y', max_tokens: 10, context_tokens: 999 }), 999);
  });

  it('OpenAI, Anthropic and llama.cpp context errors map to CONTEXT_EXCEEDED', () => {
    const apiError = (status: number, body: object) =>
      new APICallError({
        message: 'Bad Request',
        url: 'http://x/v1/chat/completions',
        requestBodyValues: {},
        statusCode: status,
        responseBody: JSON.stringify(body),
        isRetryable: false,
      });
    const openai = apiError(400, {
      error: {
        message:
          "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
        type: 'invalid_request_error',
        code: 'context_length_exceeded',
      },
    });
    const anthropic = apiError(400, {
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: 'prompt is too long: 210000 tokens > 200000 maximum',
      },
    });
    const llama = apiError(400, {
      error: {
        code: 400,
        message: 'the request exceeds the available context size, try increasing it',
        type: 'exceed_context_size_error',
      },
    });
    for (const error of [openai, anthropic, llama]) {
      const mapped = toProviderError(error);
      assert.equal(mapped.contextExceeded, true, mapped.message);
      assert.equal(mapped.retryable, false);
    }
    const other = toProviderError(apiError(400, { error: { message: 'invalid model' } }));
    assert.equal(other.contextExceeded, false);
    const rateLimited = toProviderError(
      apiError(429, { error: { message: 'too many tokens per minute' } }),
    );
    assert.equal(rateLimited.contextExceeded, false);
  });
});
