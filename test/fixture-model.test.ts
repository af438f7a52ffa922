// The fixture model's directives: deterministic output, @fail counting, @sleep abort,
// @stream chunks, @call step emission.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createFixtureProvider } from '../src/providers/fixture.ts';
import { parseFixtureScript, splitIntoChunks } from '../src/providers/fixture-script.ts';
import type { ModelRequest } from '../src/providers/provider.ts';
import { ProviderError } from '../src/providers/provider.ts';
import { createProviderRegistry } from '../src/providers/registry.ts';
import type { EntryBody, RunEntry, ToolErrorCode, ToolResultBody } from '../src/types.ts';

const RUN = '0190a000-0000-7000-8000-000000000001';

function entries(bodies: EntryBody[], runId = RUN): RunEntry[] {
  return bodies.map((body, index) => ({
    ...body,
    run_id: runId,
    seq: index + 1,
    attempt: 1,
    ts: new Date(0).toISOString(),
  }));
}

function user(text: string): EntryBody {
  return { kind: 'user', body: { text, payload: { text } } };
}

function request(list: RunEntry[], extra: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: 'echo',
    system: 'sys',
    context: [],
    entries: list,
    tools: [],
    temperature: 0,
    max_tokens: 100,
    signal: new AbortController().signal,
    ...extra,
  };
}

function result(call_id: string, name: string, ok: boolean, value: unknown): EntryBody {
  const body: ToolResultBody = ok
    ? { call_id, name, ok, result: value as never, duration_ms: 1 }
    : {
        call_id,
        name,
        ok,
        error: { code: String(value) as ToolErrorCode, message: 'x' },
        duration_ms: 1,
      };
  return { kind: 'tool_result', body };
}

describe('fixture model', () => {
  it('echoes the non-directive text, deterministically', async () => {
    const model = createFixtureProvider();
    const first = await model.complete(request(entries([user('hello\n@stream 0\nworld')])));
    const second = await model.complete(request(entries([user('hello\n@stream 0\nworld')])));
    assert.equal(first.assistant.text, 'echo: hello\nworld');
    assert.deepEqual(first.assistant, second.assistant);
    assert.equal(first.assistant.finish_reason, 'stop');
    assert.equal(first.assistant.model, 'fixture/echo');
    assert.ok(first.assistant.usage.input_tokens > 0);
  });

  it('answers @reply and @json', async () => {
    const model = createFixtureProvider();
    const reply = await model.complete(request(entries([user('@reply hi there')])));
    assert.equal(reply.assistant.text, 'hi there');
    const json = await model.complete(request(entries([user('@json {"a": 1, "b": [true]}')])));
    assert.deepEqual(JSON.parse(json.assistant.text), { a: 1, b: [true] });
  });

  it('reads only the latest user entry', async () => {
    const model = createFixtureProvider();
    const list = entries([user('@reply old'), user('new text')]);
    assert.equal((await model.complete(request(list))).assistant.text, 'echo: new text');
  });

  it('emits the k-th @call as the only call of step k, then answers with result lines', async () => {
    const model = createFixtureProvider();
    const script = '@call clock_now {}\n@call calc_eval {"expression":"1+2"}\nsum please';
    const step1 = await model.complete(request(entries([user(script)])));
    assert.deepEqual(step1.assistant.tool_calls, [
      { call_id: 'call_1_1', name: 'clock_now', arguments: '{}' },
    ]);
    assert.equal(step1.assistant.finish_reason, 'tool_calls');

    const afterOne = [
      user(script),
      { kind: 'assistant', body: step1.assistant },
      result('call_1_1', 'clock_now', true, { iso: 'x' }),
    ] as EntryBody[];
    const step2 = await model.complete(request(entries(afterOne)));
    assert.deepEqual(step2.assistant.tool_calls, [
      { call_id: 'call_2_1', name: 'calc_eval', arguments: '{"expression":"1+2"}' },
    ]);

    const afterTwo = [
      ...afterOne,
      { kind: 'assistant', body: step2.assistant },
      result('call_2_1', 'calc_eval', false, 'TOOL_NOT_FOUND'),
    ] as EntryBody[];
    const final = await model.complete(request(entries(afterTwo)));
    assert.deepEqual(final.assistant.tool_calls, []);
    assert.equal(
      final.assistant.text,
      'echo: sum please\nclock_now: {"iso":"x"}\ncalc_eval: TOOL_NOT_FOUND',
    );
  });

  it('@parallel emits every call in one step', async () => {
    const model = createFixtureProvider();
    const response = await model.complete(
      request(entries([user('@parallel\n@call a {}\n@call b {"x":1}')])),
    );
    assert.deepEqual(
      response.assistant.tool_calls.map((call) => [call.call_id, call.name]),
      [
        ['call_1_1', 'a'],
        ['call_1_2', 'b'],
      ],
    );
  });

  it('@forever keeps calling clock_now', async () => {
    const model = createFixtureProvider();
    let list: EntryBody[] = [user('@forever')];
    for (let step = 1; step <= 4; step++) {
      const response = await model.complete(request(entries(list)));
      assert.equal(response.assistant.tool_calls[0]?.name, 'clock_now');
      list = [
        ...list,
        { kind: 'assistant', body: response.assistant },
        result(`call_${step}_1`, 'clock_now', true, {}),
      ];
    }
  });

  it('@fail n status fails the first n requests of the run, keyed by run', async () => {
    const model = createFixtureProvider();
    const list = entries([user('@fail 2 503\nok')]);
    for (let i = 0; i < 2; i++) {
      await assert.rejects(model.complete(request(list)), (error: unknown) => {
        assert.ok(error instanceof ProviderError);
        assert.equal(error.status, 503);
        assert.equal(error.retryable, true);
        return true;
      });
    }
    assert.equal((await model.complete(request(list))).assistant.text, 'echo: ok');
    // Another run with the same script has its own count.
    await assert.rejects(model.complete(request(entries([user('@fail 2 503\nok')], 'other'))));
  });

  it('@fail never fails again once the run has a recorded response (a restart too)', async () => {
    const fresh = createFixtureProvider(); // a new process: no memory of earlier failures
    const list = entries([
      user('@fail 3 429\n@call clock_now {}'),
      {
        kind: 'assistant',
        body: {
          text: '',
          tool_calls: [{ call_id: 'call_1_1', name: 'clock_now', arguments: '{}' }],
          usage: { input_tokens: 1, output_tokens: 1 },
          finish_reason: 'tool_calls',
          model: 'fixture/echo',
        },
      },
      result('call_1_1', 'clock_now', true, 1),
    ]);
    assert.equal((await fresh.complete(request(list))).assistant.text, 'echo: \nclock_now: 1');
  });

  it('4xx failures are not retryable, 429 and 5xx are', async () => {
    const model = createFixtureProvider();
    await assert.rejects(model.complete(request(entries([user('@fail 1 400')]))), (error) => {
      assert.ok(error instanceof ProviderError);
      assert.equal(error.retryable, false);
      return true;
    });
    assert.equal(new ProviderError('x', { status: 429 }).retryable, true);
    assert.equal(new ProviderError('x', { status: null }).retryable, true);
  });

  it('@sleep waits, and an abort rejects the call promptly', async () => {
    const model = createFixtureProvider();
    const slept = Date.now();
    await model.complete(request(entries([user('@sleep 60\nhi')])));
    assert.ok(Date.now() - slept >= 55);

    const controller = new AbortController();
    const started = Date.now();
    const pending = model.complete(
      request(entries([user('@sleep 5000\nhi')]), { signal: controller.signal }),
    );
    setTimeout(() => controller.abort(), 30);
    await assert.rejects(pending, (error: Error) => error.name === 'AbortError');
    assert.ok(Date.now() - started < 1000, 'aborted promptly');
  });

  it('@stream n delivers the final text in n onDelta chunks', async () => {
    const model = createFixtureProvider();
    const chunks: string[] = [];
    const response = await model.complete(
      request(entries([user('@stream 4\n@reply abcdefghij')]), {
        onDelta: (text) => chunks.push(text),
      }),
    );
    assert.equal(chunks.length, 4);
    assert.equal(chunks.join(''), 'abcdefghij');
    assert.equal(response.assistant.text, 'abcdefghij');
    assert.deepEqual(splitIntoChunks('ab', 5), ['a', 'b']);
  });

  it('parses directives and keeps invalid @json as text', () => {
    const script = parseFixtureScript('@json {not json\n@sleep x\nplain');
    assert.equal(script.json, null);
    assert.equal(script.jsonText, '{not json');
    assert.equal(script.sleepMs, 0);
    assert.equal(script.text, 'plain');
  });

  it('the registry resolves provider/model with fixture built in', () => {
    const registry = createProviderRegistry();
    assert.equal(registry.resolve('fixture/echo')?.model, 'echo');
    assert.equal(registry.resolve('fixture/a/b')?.model, 'a/b');
    assert.equal(registry.resolve('openai/gpt-4.1-mini'), null);
    assert.equal(registry.resolve('fixture'), null);
    assert.equal(registry.resolve('fixture/'), null);
  });
});
