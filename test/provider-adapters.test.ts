// keel's provider adapters (AI SDK provider layer) against recorded OpenAI and Anthropic
// responses replayed over loopback HTTP: streamed and non-streamed tool calls, usage,
// finish reasons, the request keel sends, errors with status / retryable / Retry-After,
// raw bodies in the response without the API key.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createConfiguredProviders } from '../src/providers/configured.ts';
import type { ModelRequest, Provider } from '../src/providers/provider.ts';
import { ProviderError } from '../src/providers/provider.ts';
import { retryAfterMs } from '../src/providers/provider-errors.ts';
import type { EntryBody, RunEntry } from '../src/types.ts';
import type { ReplayServer } from './helpers/replay-server.ts';
import { startReplayServer } from './helpers/replay-server.ts';

const KEY = 'sk-test-0123456789abcdef-secret';
let replay: ReplayServer;
let providers: Record<string, Provider>;

function entries(bodies: EntryBody[]): RunEntry[] {
  return bodies.map((body, index) => ({
    ...body,
    run_id: 'r1',
    seq: index + 1,
    attempt: 1,
    ts: '',
  }));
}

function request(extra: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: 'm1',
    system: 'You are terse.',
    context: [
      { role: 'user', content: 'earlier question', run_id: 'r0', ts: '' },
      { role: 'assistant', content: 'earlier answer', run_id: 'r0', ts: '' },
    ],
    entries: entries([{ kind: 'user', body: { text: 'weather and time in Paris?', payload: {} } }]),
    tools: [
      { name: 'get_weather', description: 'weather', input_schema: { type: 'object' } },
      { name: 'get_time', description: 'time', input_schema: { type: 'object' } },
    ],
    temperature: 0.2,
    max_tokens: 256,
    signal: new AbortController().signal,
    ...extra,
  };
}

before(async () => {
  replay = await startReplayServer();
  providers = createConfiguredProviders(
    {
      // stream = true: these test the streamed path (the default, "when-watched", asks a
      // call nobody watches for whole — `watched` below, and `defaulted`).
      compat: {
        type: 'openai-compatible',
        base_url: `${replay.url}/v1`,
        api_key_env: 'X',
        stream: true,
      },
      openai: { type: 'openai', base_url: `${replay.url}/v1`, api_key_env: 'X', stream: true },
      openaiplain: { type: 'openai', base_url: `${replay.url}/v1`, stream: false },
      watched: { type: 'openai-compatible', base_url: `${replay.url}/v1`, stream: 'when-watched' },
      defaulted: { type: 'openai-compatible', base_url: `${replay.url}/v1` },
      claude: { type: 'anthropic', base_url: `${replay.url}/v1`, api_key_env: 'X', stream: true },
      claudeplain: {
        type: 'anthropic',
        base_url: `${replay.url}/v1`,
        api_key_env: 'X',
        stream: false,
      },
    },
    { compat: KEY, openai: KEY, claude: KEY, claudeplain: KEY },
  );
});

after(async () => {
  await replay.close();
});

function provider(name: string): Provider {
  const found = providers[name];
  assert.ok(found);
  return found;
}

const EXPECTED_CALLS = [
  { call_id: 'call_w1', name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' },
  { call_id: 'call_t2', name: 'get_time', arguments: '{"tz":"Europe/Paris"}' },
];

describe('OpenAI Chat Completions (recorded)', () => {
  it('streamed: text deltas, interleaved tool-call deltas assembled, usage, finish reason', async () => {
    replay.respond({ file: 'openai-chat-tool-calls.sse' });
    const deltas: string[] = [];
    const response = await provider('compat').complete(
      request({ onDelta: (text) => deltas.push(text) }),
    );
    assert.deepEqual(deltas, ['Let me ', 'check.']);
    assert.deepEqual(response.assistant, {
      text: 'Let me check.',
      tool_calls: EXPECTED_CALLS,
      usage: { input_tokens: 31, output_tokens: 17 },
      finish_reason: 'tool_calls',
      model: 'compat/m1',
    });
    const sent = JSON.parse(replay.requests.at(-1)?.body ?? '{}');
    assert.equal(replay.requests.at(-1)?.path, '/v1/chat/completions');
    assert.equal(sent.stream, true);
    assert.deepEqual(sent.stream_options, { include_usage: true });
    assert.deepEqual(
      sent.messages.map((m: { role: string }) => m.role),
      ['system', 'user', 'assistant', 'user'],
    );
    assert.equal(sent.max_tokens, 256);
    assert.equal(sent.tools.length, 2);
  });

  it('the openai type uses .chat() (Chat Completions, not the Responses API)', async () => {
    replay.respond({ file: 'openai-chat-text.sse' });
    const response = await provider('openai').complete(request());
    assert.equal(replay.requests.at(-1)?.path, '/v1/chat/completions');
    assert.equal(response.assistant.text, 'It is 14:05 in Paris and 18 °C.');
    assert.equal(response.assistant.finish_reason, 'stop');
    assert.deepEqual(response.assistant.usage, { input_tokens: 80, output_tokens: 12 });
  });

  it('non-streamed: tool calls and usage from the JSON body', async () => {
    replay.respond({ file: 'openai-chat-tool-calls.json' });
    const response = await provider('openaiplain').complete(request());
    assert.equal(JSON.parse(replay.requests.at(-1)?.body ?? '{}').stream, undefined);
    assert.deepEqual(response.assistant.tool_calls, EXPECTED_CALLS);
    assert.equal(response.assistant.text, 'Let me check.');
    assert.deepEqual(response.assistant.usage, { input_tokens: 31, output_tokens: 17 });
    // The raw exchange is JSON texts: a JSON response body stays JSON.
    assert.equal(JSON.parse(response.raw?.response ?? 'null').id, 'chatcmpl-rec3');
  });

  it('stream = "when-watched": streamed while watched (deltas), one JSON answer otherwise', async () => {
    replay.respond({ file: 'openai-chat-tool-calls.sse' });
    const deltas: string[] = [];
    const onDelta = (text: string): number => deltas.push(text);
    const watched = await provider('watched').complete(request({ onDelta, watched: () => true }));
    assert.equal(JSON.parse(replay.requests.at(-1)?.body ?? '{}').stream, true);
    assert.deepEqual(deltas, ['Let me ', 'check.']);
    assert.deepEqual(watched.assistant.tool_calls, EXPECTED_CALLS);

    for (const extra of [{ onDelta, watched: () => false }, {}]) {
      replay.respond({ file: 'openai-chat-tool-calls.json' });
      const unwatched = await provider('watched').complete(request(extra));
      const sent = JSON.parse(replay.requests.at(-1)?.body ?? '{}');
      assert.equal(sent.stream, undefined, 'no stream asked for');
      assert.equal(sent.stream_options, undefined);
      // The same answer either way, and the trace keeps the JSON body.
      assert.deepEqual(unwatched.assistant, watched.assistant);
      assert.equal(JSON.parse(unwatched.raw?.response ?? 'null').id, 'chatcmpl-rec3');
    }
    assert.equal(deltas.length, 2, 'no deltas from the unwatched calls');

    // A provider that always streams, or never does, ignores whether anyone watches.
    replay.respond({ file: 'openai-chat-tool-calls.sse' });
    await provider('compat').complete(request({ watched: () => false }));
    assert.equal(JSON.parse(replay.requests.at(-1)?.body ?? '{}').stream, true);
    replay.respond({ file: 'openai-chat-tool-calls.json' });
    await provider('openaiplain').complete(request({ watched: () => true }));
    assert.equal(JSON.parse(replay.requests.at(-1)?.body ?? '{}').stream, undefined);

    // A provider without a `stream` setting is "when-watched" (the default since 2026-12-03).
    replay.respond({ file: 'openai-chat-tool-calls.json' });
    await provider('defaulted').complete(request({ onDelta, watched: () => false }));
    assert.equal(JSON.parse(replay.requests.at(-1)?.body ?? '{}').stream, undefined);
    replay.respond({ file: 'openai-chat-tool-calls.sse' });
    await provider('defaulted').complete(request({ onDelta, watched: () => true }));
    assert.equal(JSON.parse(replay.requests.at(-1)?.body ?? '{}').stream, true);
  });

  it('tool results go back as tool messages; an error result as {"error": {code, message}}', async () => {
    replay.respond({ file: 'openai-chat-text.sse' });
    await provider('compat').complete(
      request({
        entries: entries([
          { kind: 'user', body: { text: 'weather and time?', payload: {} } },
          {
            kind: 'assistant',
            body: {
              text: 'Let me check.',
              tool_calls: EXPECTED_CALLS,
              usage: { input_tokens: 1, output_tokens: 1 },
              finish_reason: 'tool_calls',
              model: 'compat/m1',
            },
          },
          {
            kind: 'tool_result',
            body: {
              call_id: 'call_w1',
              name: 'get_weather',
              ok: true,
              result: { c: 18 },
              duration_ms: 1,
            },
          },
          {
            kind: 'tool_result',
            body: {
              call_id: 'call_t2',
              name: 'get_time',
              ok: false,
              error: { code: 'TOOL_TIMEOUT', message: 'slow' },
              duration_ms: 1,
            },
          },
        ]),
      }),
    );
    const sent = JSON.parse(replay.requests.at(-1)?.body ?? '{}');
    const tail = sent.messages.slice(-3);
    assert.equal(tail[0].tool_calls[0].function.arguments, '{"city":"Paris","unit":"c"}');
    assert.deepEqual(tail[1], { role: 'tool', tool_call_id: 'call_w1', content: '{"c":18}' });
    assert.deepEqual(JSON.parse(tail[2].content), {
      error: { code: 'TOOL_TIMEOUT', message: 'slow' },
    });
  });

  it('429 → retryable with Retry-After; 500 → retryable; 400 → not retryable, with the server message', async () => {
    replay.respond({ status: 429, headers: { 'retry-after': '2' }, file: 'openai-error-429.json' });
    const limited = await provider('compat')
      .complete(request())
      .catch((error: unknown) => error);
    assert.ok(limited instanceof ProviderError);
    assert.equal(limited.status, 429);
    assert.equal(limited.retryable, true);
    assert.equal(limited.retryAfterMs, 2000);
    assert.match(limited.message, /Rate limit reached/);

    replay.respond({ status: 500, body: '{"error":{"message":"upstream exploded"}}' });
    const crashed = await provider('openai')
      .complete(request())
      .catch((error: unknown) => error);
    assert.ok(crashed instanceof ProviderError);
    assert.deepEqual([crashed.status, crashed.retryable], [500, true]);

    replay.respond({ status: 400, body: '{"error":{"message":"messages: too long"}}' });
    const bad = await provider('compat')
      .complete(request())
      .catch((error: unknown) => error);
    assert.ok(bad instanceof ProviderError);
    assert.deepEqual([bad.status, bad.retryable, bad.message], [400, false, 'messages: too long']);
  });

  it('an in-band insufficient_quota error before any output is a 429 that is not retried', async () => {
    // The provider package's APICallError knows quota exhaustion will not pass on retry;
    // the plain status rule (429 → retry) did not.
    replay.respond({
      headers: { 'content-type': 'text/event-stream' },
      body: 'data: {"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}\n\n',
    });
    const quota = await provider('openai')
      .complete(request())
      .catch((error: unknown) => error);
    assert.ok(quota instanceof ProviderError);
    assert.deepEqual(
      [quota.status, quota.retryable, quota.message],
      [429, false, 'You exceeded your current quota'],
    );
  });

  it('raw request and response bodies are kept, and the API key is never in them', async () => {
    replay.respond({ file: 'openai-chat-tool-calls.sse' });
    const response = await provider('compat').complete(request());
    assert.equal(replay.requests.at(-1)?.headers.authorization, `Bearer ${KEY}`);
    // keel routes each request to its call's recorder by a header it takes off again.
    assert.equal(replay.requests.at(-1)?.headers['x-keel-model-call'], undefined);
    const raw = JSON.stringify(response.raw);
    assert.ok(!raw.includes(KEY));
    // The request body is the text that was sent (not parsed and serialised again); a
    // streamed response is the SSE text as a JSON string.
    assert.equal(response.raw?.request, replay.requests.at(-1)?.body);
    assert.equal(JSON.parse(response.raw?.request ?? '{}').model, 'm1');
    assert.match(JSON.parse(response.raw?.response ?? '""') as string, /chatcmpl-rec1/);
  });

  it('a request body the recorder changed is still JSON in the trace: redacted, or cut to a string', async () => {
    // The key inside the prompt: the recorder redacts it in the request body.
    replay.respond({ file: 'openai-chat-text.sse' });
    const leaked = await provider('compat').complete(
      request({ system: `You are terse. The key is ${KEY}.` }),
    );
    assert.ok(replay.requests.at(-1)?.body.includes(KEY), 'the key was sent');
    const redacted = JSON.parse(leaked.raw?.request ?? '') as { messages: { content: string }[] };
    assert.match(redacted.messages[0]?.content ?? '', /The key is \[redacted\]\./);
    assert.ok(!(leaked.raw?.request ?? '').includes(KEY));
    // A body past the recorder's 256 KiB is cut: no longer JSON, kept as a string.
    replay.respond({ file: 'openai-chat-text.sse' });
    const huge = await provider('compat').complete(request({ system: 'x'.repeat(300 * 1024) }));
    const cut = JSON.parse(huge.raw?.request ?? '') as unknown;
    assert.equal(typeof cut, 'string');
    assert.match(cut as string, /more characters\]$/);
  });
});

describe('Anthropic Messages (recorded)', () => {
  it('streamed: text, tool_use input_json_delta assembled, usage from message_start + message_delta', async () => {
    replay.respond({ file: 'anthropic-messages-tool-use.sse' });
    const deltas: string[] = [];
    const response = await provider('claude').complete(
      request({ onDelta: (text) => deltas.push(text) }),
    );
    assert.equal(replay.requests.at(-1)?.path, '/v1/messages');
    assert.equal(replay.requests.at(-1)?.headers['x-api-key'], KEY);
    assert.equal(replay.requests.at(-1)?.headers['x-keel-model-call'], undefined);
    assert.deepEqual(deltas, ['Let me ', 'check.']);
    assert.deepEqual(response.assistant.tool_calls, [
      { call_id: 'toolu_w1', name: 'get_weather', arguments: '{"city": "Paris", "unit": "c"}' },
      { call_id: 'toolu_t2', name: 'get_time', arguments: '{"tz": "Europe/Paris"}' },
    ]);
    assert.deepEqual(response.assistant.usage, { input_tokens: 31, output_tokens: 17 });
    assert.equal(response.assistant.finish_reason, 'tool_calls');
    const sent = JSON.parse(replay.requests.at(-1)?.body ?? '{}');
    assert.equal(sent.max_tokens, 256);
    assert.equal(sent.system[0].text, 'You are terse.');
    assert.ok(!JSON.stringify(response.raw).includes(KEY));
  });

  it('non-streamed tool_use, and tool results merged into one user turn with is_error', async () => {
    replay.respond({ file: 'anthropic-messages-tool-use.json' });
    const response = await provider('claudeplain').complete(
      request({
        entries: entries([
          { kind: 'user', body: { text: 'weather and time?', payload: {} } },
          {
            kind: 'assistant',
            body: {
              text: '',
              tool_calls: [
                { call_id: 'toolu_a', name: 'get_weather', arguments: '{"city": Paris' },
                { call_id: 'toolu_b', name: 'get_time', arguments: '{}' },
              ],
              usage: { input_tokens: 1, output_tokens: 1 },
              finish_reason: 'tool_calls',
              model: 'claude/m1',
            },
          },
          {
            kind: 'tool_result',
            body: {
              call_id: 'toolu_a',
              name: 'get_weather',
              ok: false,
              error: { code: 'INVALID_ARGUMENTS', message: 'not JSON' },
              duration_ms: 0,
            },
          },
          {
            kind: 'tool_result',
            body: {
              call_id: 'toolu_b',
              name: 'get_time',
              ok: true,
              result: '14:05',
              duration_ms: 0,
            },
          },
        ]),
      }),
    );
    assert.deepEqual(response.assistant.tool_calls, [
      { call_id: 'toolu_w1', name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' },
    ]);
    const sent = JSON.parse(replay.requests.at(-1)?.body ?? '{}');
    const [assistant, results] = sent.messages.slice(-2);
    // Invalid argument text cannot be replayed as Anthropic's object input: {} instead.
    assert.deepEqual(assistant.content[0].input, {});
    assert.equal(results.role, 'user');
    assert.equal(results.content.length, 2);
    assert.equal(results.content[0].is_error, true);
  });

  it('400 is not retryable and keeps the server message', async () => {
    replay.respond({ status: 400, file: 'anthropic-error-400.json' });
    const bad = await provider('claude')
      .complete(request())
      .catch((error: unknown) => error);
    assert.ok(bad instanceof ProviderError);
    assert.deepEqual(
      [bad.status, bad.retryable, bad.message],
      [400, false, 'max_tokens: Field required'],
    );
  });

  it('529 overloaded is retryable', async () => {
    replay.respond({
      status: 529,
      body: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    });
    const busy = await provider('claude')
      .complete(request())
      .catch((error: unknown) => error);
    assert.ok(busy instanceof ProviderError);
    assert.deepEqual([busy.status, busy.retryable], [529, true]);
  });
});

describe('errors without a response', () => {
  it('connection refused is retryable with no status; Retry-After forms parse', async () => {
    const [refused] = Object.values(
      createConfiguredProviders(
        { gone: { type: 'openai-compatible', base_url: 'http://127.0.0.1:1/v1' } },
        {},
      ),
    );
    const error = await refused?.complete(request()).catch((caught: unknown) => caught);
    assert.ok(error instanceof ProviderError);
    assert.deepEqual([error.status, error.retryable], [null, true]);
    assert.equal(retryAfterMs({ 'retry-after-ms': '10', 'retry-after': '3' }), 10);
    assert.equal(retryAfterMs({ 'Retry-After': '3' }), 3000);
    assert.equal(retryAfterMs({ 'retry-after': new Date(10_000).toUTCString() }, 4000), 6000);
    assert.equal(retryAfterMs({}), null);
  });

  it('an openai-compatible provider without base_url is a config error naming the key', () => {
    assert.throws(() => createConfiguredProviders({ ollama: { type: 'openai-compatible' } }, {}), {
      code: 'CONFIG_INVALID',
      message: /providers\.ollama.*base_url/,
    });
  });
});
