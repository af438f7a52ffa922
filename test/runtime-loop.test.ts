// The run loop against a real SQLite store and the fixture model: outcomes, entries,
// retries, output_schema repair, limits, thread context.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Provider } from '../src/providers/provider.ts';
import type { AssistantBody } from '../src/types.ts';
import type { Harness } from './runtime-harness.ts';
import { TENANT, openHarness, types } from './runtime-harness.ts';

/** Answers invalid text first, then a valid object once a repair note is in the run. */
const repairingModel: Provider = {
  name: 'repairing',
  async complete(request) {
    const repaired = request.entries.some((entry) => entry.kind === 'note');
    const assistant: AssistantBody = {
      text: repaired ? '{"answer": 42}' : 'forty-two',
      tool_calls: [],
      usage: { input_tokens: 3, output_tokens: 2 },
      finish_reason: 'stop',
      model: `repairing/${request.model}`,
    };
    return { assistant };
  },
};

describe('run loop', () => {
  let h: Harness;
  before(async () => {
    h = await openHarness({ providers: { repairing: repairingModel } });
  });
  after(async () => {
    await h.close();
  });

  it('a turn succeeds with {reply: "echo: …"}: one user + one assistant entry', async () => {
    const runId = await h.submit('hello there');
    const run = await h.wait(runId);
    assert.equal(run.status, 'succeeded');
    assert.deepEqual(run.output, { reply: 'echo: hello there' });
    assert.equal(run.attempt, 1);
    assert.equal(run.steps, 1);
    assert.equal(run.usage.model_calls, 1);
    assert.ok(run.usage.input_tokens > 0 && run.usage.output_tokens > 0);
    const entries = await h.store.loadEntries(runId);
    assert.deepEqual(
      entries.map((entry) => entry.kind),
      ['user', 'assistant'],
    );
    assert.deepEqual(types(await h.trace(runId)), [
      'run.queued',
      'run.claimed',
      'model.request',
      'model.response',
      'run.succeeded',
    ]);
    const response = (await h.trace(runId)).find((event) => event.type === 'model.response');
    assert.equal(response?.data.step, 1);
    assert.equal(typeof response?.data.latency_ms, 'number');
    assert.ok(response?.data.raw, 'raw bodies recorded');
  });

  it('@json answers with the object itself', async () => {
    const run = await h.wait(await h.submit('@json {"n": 3, "ok": true}', { scope: 'json' }));
    assert.deepEqual(run.output, { n: 3, ok: true });
  });

  it('output_schema: one repair note, then OUTPUT_INVALID', async () => {
    await h.putAgent('strict', {
      output_schema: { type: 'object', required: ['answer'] },
    });
    const runId = await h.submit('what is it?', { agent: 'strict' });
    const run = await h.wait(runId);
    assert.equal(run.status, 'failed');
    assert.equal(run.error?.code, 'OUTPUT_INVALID');
    assert.match(run.error?.message ?? '', /answer/);
    assert.equal(run.usage.model_calls, 2);
    const entries = await h.store.loadEntries(runId);
    assert.deepEqual(
      entries.map((entry) => entry.kind),
      ['user', 'assistant', 'note', 'assistant'],
    );
    assert.ok(types(await h.trace(runId)).includes('run.note'));
  });

  it('output_schema: a repaired answer succeeds', async () => {
    await h.putAgent('repair', {
      model: 'repairing/x',
      output_schema: {
        type: 'object',
        required: ['answer'],
        properties: { answer: { type: 'integer' } },
      },
    });
    const run = await h.wait(await h.submit('?', { agent: 'repair' }));
    assert.equal(run.status, 'succeeded');
    assert.deepEqual(run.output, { answer: 42 });
    assert.equal(run.steps, 2);
  });

  it('output_schema keywords the hand-written checker ignored: minimum', async () => {
    // The repaired answer {"answer": 42} is an integer but below `minimum`.
    await h.putAgent('bounded-answer', {
      model: 'repairing/x',
      output_schema: {
        type: 'object',
        required: ['answer'],
        properties: { answer: { type: 'integer', minimum: 100 } },
      },
    });
    const run = await h.wait(await h.submit('?', { agent: 'bounded-answer' }));
    assert.equal(run.status, 'failed', 'an answer below minimum must not succeed');
    assert.equal(run.error?.code, 'OUTPUT_INVALID');
    assert.match(run.error?.message ?? '', /\$\.answer: must be >= 100/);
    assert.equal(run.usage.model_calls, 2, 'one repair step, as before');
  });

  it('output_schema keywords the hand-written checker ignored: $ref + pattern', async () => {
    await h.putAgent('patterned', {
      output_schema: {
        $ref: '#/definitions/answer',
        definitions: {
          answer: {
            type: 'object',
            properties: { reply: { type: 'string', pattern: '^echo: [a-z]+$' } },
          },
        },
      },
    });
    const bad = await h.wait(await h.submit('Hello 42', { agent: 'patterned', scope: 'p1' }));
    assert.equal(bad.status, 'failed', 'a reply against the pattern must not succeed');
    assert.equal(bad.error?.code, 'OUTPUT_INVALID');
    assert.match(bad.error?.message ?? '', /\$\.reply: must match pattern/);
    const good = await h.wait(await h.submit('hello', { agent: 'patterned', scope: 'p2' }));
    assert.equal(good.status, 'succeeded');
    assert.deepEqual(good.output, { reply: 'echo: hello' });
  });

  it('output_schema that cannot be used fails at once, without a repair step', async () => {
    await h.putAgent('unusable-schema', { output_schema: { $ref: 'https://example.com/s' } });
    const run = await h.wait(await h.submit('hi', { agent: 'unusable-schema' }));
    assert.equal(run.status, 'failed');
    assert.equal(run.error?.code, 'OUTPUT_INVALID');
    assert.match(run.error?.message ?? '', /output_schema cannot be used/);
    assert.equal(run.usage.model_calls, 1);
  });

  it('max_steps: @forever fails MAX_STEPS_EXCEEDED, each call answered', async () => {
    await h.putAgent('bounded', { max_steps: 3 });
    const runId = await h.submit('@forever', { agent: 'bounded' });
    const run = await h.wait(runId);
    assert.equal(run.status, 'failed');
    assert.equal(run.error?.code, 'MAX_STEPS_EXCEEDED');
    assert.equal(run.steps, 3);
    const entries = await h.store.loadEntries(runId);
    assert.deepEqual(
      entries.map((entry) => entry.kind),
      ['user', 'assistant', 'tool_result', 'assistant', 'tool_result', 'assistant', 'tool_result'],
    );
    const result = entries[2];
    assert.equal(result?.kind === 'tool_result' && result.body.ok, true, 'clock_now answered');
    assert.equal(types(await h.trace(runId)).filter((type) => type === 'tool.result').length, 3);
  });

  it('timeout_ms: a run past its deadline fails RUN_TIMEOUT, the call aborted', async () => {
    await h.putAgent('hasty', { timeout_ms: 300 });
    const started = Date.now();
    const run = await h.wait(await h.submit('@sleep 5000', { agent: 'hasty' }));
    assert.equal(run.status, 'failed');
    assert.equal(run.error?.code, 'RUN_TIMEOUT');
    assert.ok(Date.now() - started < 2000, `took ${Date.now() - started} ms`);
  });

  it('@fail 2 503: retried twice, then succeeds', async () => {
    const runId = await h.submit('@fail 2 503\nretry me', { scope: 'retry' });
    const run = await h.wait(runId);
    assert.equal(run.status, 'succeeded');
    assert.deepEqual(run.output, { reply: 'echo: retry me' });
    const retries = (await h.trace(runId)).filter((event) => event.type === 'model.retry');
    assert.equal(retries.length, 2);
    assert.deepEqual(
      retries.map((event) => event.data.attempt),
      [1, 2],
    );
    assert.ok((retries[1]?.data.delay_ms as number) > (retries[0]?.data.delay_ms as number));
  });

  it('@fail 5 503: PROVIDER_ERROR after 3 retries, with the status', async () => {
    const runId = await h.submit('@fail 5 503', { scope: 'retry-out' });
    const run = await h.wait(runId);
    assert.equal(run.status, 'failed');
    assert.equal(run.error?.code, 'PROVIDER_ERROR');
    assert.match(run.error?.message ?? '', /503/);
    const trace = types(await h.trace(runId));
    assert.equal(trace.filter((type) => type === 'model.retry').length, 3);
    assert.equal(trace.filter((type) => type === 'model.response').length, 0);
  });

  it('@fail 1 400: no retry, PROVIDER_ERROR', async () => {
    const runId = await h.submit('@fail 1 400', { scope: 'bad-request' });
    const run = await h.wait(runId);
    assert.equal(run.error?.code, 'PROVIDER_ERROR');
    assert.match(run.error?.message ?? '', /400/);
    assert.ok(!types(await h.trace(runId)).includes('model.retry'));
  });

  it('an unconfigured provider fails MODEL_NOT_FOUND', async () => {
    await h.putAgent('nowhere', { model: 'openai/gpt-4.1-mini' });
    const run = await h.wait(await h.submit('hi', { agent: 'nowhere' }));
    assert.equal(run.error?.code, 'MODEL_NOT_FOUND');
  });

  it('thread context grows by one turn per succeeded run and reaches the model', async () => {
    await h.putAgent('ctx', { context_window: 2 });
    const seen: number[] = [];
    for (const text of ['one', 'two', 'three', 'four']) {
      const before = h.model.requests.length;
      const run = await h.wait(await h.submit(text, { agent: 'ctx', scope: 'thread' }));
      assert.equal(run.status, 'succeeded');
      seen.push(h.model.requests[before]?.context.length ?? -1);
    }
    // context_window 2: at most two complete turns (user + assistant each).
    assert.deepEqual(seen, [0, 2, 4, 4]);
    const last = h.model.requests[h.model.requests.length - 1];
    assert.deepEqual(
      last?.context.map((message) => message.content),
      ['two', 'echo: two', 'three', 'echo: three'],
    );
    const thread = await h.store.getThread(TENANT, 'ctx', 'thread');
    assert.ok(thread && thread.turns >= 2);
  });

  it('a persona becomes the system prompt', async () => {
    await h.putAgent('persona', { persona: 'You are Ada.' });
    const before = h.model.requests.length;
    await h.wait(await h.submit('hi', { agent: 'persona' }));
    assert.match(h.model.requests[before]?.system ?? '', /^You are Ada\./);
  });
});
