// The openai-compatible provider end to end against `keel fixture-model` (the fixture
// rules served over HTTP): keel runs with streamed tool calls and usage, retries on 429
// (Retry-After) and 5xx, no retry on 4xx (PROVIDER_ERROR with status), an aborted
// stream on cancel (the server sees the connection close), raw bodies in the trace
// without the key, `stream = "when-watched"` — the default — (whole answers unless an SSE
// client, a turn submitted with `follow` or an OpenAI streaming request watches; an SSE
// client that connects late gets each call's whole text as one delta); plus the server's
// own routes.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import type { KeelClient } from '../src/client/index.ts';
import { createKeelClient } from '../src/client/index.ts';
import type { FixtureServer } from '../src/providers/fixture-server.ts';
import { startFixtureServer } from '../src/providers/fixture-server.ts';
import type { TestKeel } from './helpers/keel-server.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import { waitFor } from './helpers/wait-for.ts';

const KEY = 'sk-fixture-key-7f3a9c1e5b';
let model: FixtureServer;
let keel: TestKeel;
let client: KeelClient;
const authorizations: string[] = [];

before(async () => {
  model = await startFixtureServer({
    onRequest: (request) => authorizations.push(String(request.headers.authorization)),
  });
  keel = await startTestKeel({
    toml: [
      `[providers.local]\ntype = "openai-compatible"\nbase_url = "${model.url}/v1"\napi_key_env = "LOCAL_KEY"\nstream = true`,
      `[providers.onlywatched]\ntype = "openai-compatible"\nbase_url = "${model.url}/v1"\nstream = "when-watched"`,
      `[providers.plain]\ntype = "openai-compatible"\nbase_url = "${model.url}/v1"`,
    ].join('\n'),
    env: { LOCAL_KEY: KEY },
  });
  client = createKeelClient({ baseUrl: keel.url });
  await client.tenants.create({ name: 'fm' });
  await client.agents.put('fm', 'a', { model: 'local/fixture' });
  await client.agents.put('fm', 'w', { model: 'onlywatched/fixture' });
  await client.agents.put('fm', 'd', { model: 'plain/fixture' });
});

after(async () => {
  await keel.close();
  await model.close();
});

/** The raw response of each model call of a run, from its trace (JSON body or SSE text). */
async function rawResponses(runId: string): Promise<unknown[]> {
  const trace = await client.runs.trace('fm', runId);
  return (trace.events as unknown as { type: string; data: { raw: { response: unknown } } }[])
    .filter((event) => event.type === 'model.response')
    .map((event) => event.data.raw.response);
}

async function runTurn(text: string, scope: string) {
  const created = await client.turns.submit('fm', { agent: 'a', scope, payload: { text } });
  const done = await client.turns.wait('fm', created.run_id, 20_000);
  const trace = await client.runs.trace('fm', created.run_id);
  return {
    run: done.run,
    events: trace.events as unknown as { type: string; data: Record<string, unknown> }[],
  };
}

describe('openai-compatible provider × keel fixture-model', () => {
  it('runs a turn with streamed tool calls, usage and the fixture rules', async () => {
    const { run, events } = await runTurn(
      'hello\n@call calc_eval {"expression":"6*7"}\n@stream 3',
      'tools',
    );
    assert.equal(run.status, 'succeeded');
    assert.equal(run.output?.reply, 'echo: hello\ncalc_eval: {"expression":"6*7","value":42}');
    const responses = events.filter((e) => e.type === 'model.response');
    assert.equal(responses.length, 2);
    assert.equal(responses[0]?.data.finish_reason, 'tool_calls');
    assert.ok(run.usage.input_tokens > 0 && run.usage.output_tokens > 0);
    // The streamed response was assembled from tool-call deltas (see the raw SSE).
    assert.match(
      String((responses[0]?.data.raw as { response: string }).response),
      /"tool_calls":\[\{"index":0,"function":\{"arguments"/,
    );
  });

  it('429 with Retry-After twice, then success: two model.retry events', async () => {
    const before = model.stats.requests;
    const { run, events } = await runTurn('@fail 2 429\nretry me', 'r429');
    assert.equal(run.status, 'succeeded');
    const retries = events.filter((e) => e.type === 'model.retry');
    assert.equal(retries.length, 2);
    assert.match(String((retries[0]?.data.error as { message: string }).message), /status 429/);
    assert.equal(model.stats.requests - before, 3);
  });

  it('a 5xx is retried', async () => {
    const { run, events } = await runTurn('@fail 1 503\nonce more', 'r503');
    assert.equal(run.status, 'succeeded');
    assert.equal(events.filter((e) => e.type === 'model.retry').length, 1);
  });

  it('a 4xx is not retried: the run fails PROVIDER_ERROR with the status and message', async () => {
    const before = model.stats.requests;
    const { run, events } = await runTurn('@fail 1 400\nbad request', 'r400');
    assert.equal(run.status, 'failed');
    assert.equal(run.error?.code, 'PROVIDER_ERROR');
    assert.match(run.error?.message ?? '', /status 400.*scripted failure 1 of 1/);
    assert.equal(events.filter((e) => e.type === 'model.retry').length, 0);
    assert.equal(model.stats.requests - before, 1);
  });

  it('cancel aborts the model call: the server sees the connection closed', async () => {
    const abandoned = model.stats.abandoned;
    const requests = model.stats.requests;
    const created = await client.turns.submit('fm', {
      agent: 'a',
      scope: 'cancel',
      payload: { text: '@sleep 10000\nslow' },
    });
    await waitFor('the model call reached the server', () => model.stats.requests > requests);
    await client.runs.cancel('fm', created.run_id);
    await waitFor('the server saw the call abandoned', () => model.stats.abandoned > abandoned);
    assert.equal(model.stats.abandoned, abandoned + 1);
  });

  it('keeps raw request and response bodies in the trace, never the API key', async () => {
    const { events } = await runTurn('secret test', 'raw');
    assert.ok(authorizations.includes(`Bearer ${KEY}`), 'the key was sent to the server');
    const response = events.find((e) => e.type === 'model.response');
    const raw = response?.data.raw as { request: { messages: unknown[] }; response: string };
    assert.ok(raw.request.messages.length >= 2);
    assert.match(raw.response, /data: \[DONE\]/);
    assert.ok(!JSON.stringify(events).includes(KEY));
  });

  it('stream = "when-watched": whole answers for a run nobody watches, streamed while an SSE client does', async () => {
    const submit = (scope: string, text: string) =>
      client.turns.submit('fm', { agent: 'w', scope, payload: { text } });

    // Nobody watches: both model calls are asked for whole (a JSON body in the trace).
    const alone = await submit('unwatched', 'hi\n@call clock_now {}\n@stream 3');
    assert.equal((await client.turns.wait('fm', alone.run_id, 20_000)).run.status, 'succeeded');
    const unwatched = await rawResponses(alone.run_id);
    assert.equal(unwatched.length, 2);
    for (const body of unwatched) assert.equal((body as Loose).object, 'chat.completion');

    // Watched: the run waits in its lane behind a blocking one while an SSE client
    // subscribes, then the blocker is cancelled, so it is watched from its first model call;
    // its text arrives as deltas.
    const blocker = await submit('watched', '@sleep 60000\nblocking');
    const followed = await submit('watched', 'hi\n@call clock_now {}\n@stream 3');
    const seen: { type: string; data: Loose }[] = [];
    let statusAtSubscribe = '';
    for await (const event of client.turns.events('fm', followed.run_id)) {
      if (seen.length === 0) {
        statusAtSubscribe = (await client.runs.get('fm', followed.run_id)).run.status;
        await client.runs.cancel('fm', blocker.run_id);
      }
      seen.push(event as { type: string; data: Loose });
    }
    assert.equal(statusAtSubscribe, 'queued', 'subscribed before the run started');
    const deltas = seen.filter((event) => event.type === 'model.delta');
    assert.equal(deltas.length, 3);
    const reply = String(seen.at(-1)?.data.output.reply);
    assert.match(reply, /^echo: hi/);
    assert.equal(deltas.map((event) => event.data.text).join(''), reply);
    const watched = await rawResponses(followed.run_id);
    assert.equal(watched.length, 2);
    for (const body of watched) assert.match(String(body), /data: \[DONE\]/);
  });

  it('stream = "when-watched": a turn submitted with follow streams for a client that opens its events late', async () => {
    // The model answers after 1.5 s, so the client's stream opens while the call is open.
    const text = 'late client\n@sleep 1500\n@stream 3';
    const lateFollow = async (follow: boolean) => {
      const requests = model.stats.requests;
      const created = await client.turns.submit('fm', {
        agent: 'w',
        scope: `follow-${follow}`,
        payload: { text },
        ...(follow && { follow }),
      });
      // A client over a slow network: the model call went out before its event stream opened.
      await waitFor('the model call went out', () => model.stats.requests > requests);
      const events: { type: string; data: Loose }[] = [];
      for await (const event of client.turns.events('fm', created.run_id))
        events.push(event as { type: string; data: Loose });
      const response = events.find((event) => event.type === 'model.response');
      const deltas = events.filter((event) => event.type === 'model.delta');
      return {
        deltas: deltas.length,
        whole: deltas.filter((event) => event.data.whole === true).length,
        text: deltas.map((event) => event.data.text).join(''),
        reply: String(events.at(-1)?.data.output.reply),
        raw: JSON.stringify(response?.data.raw.response),
      };
    };
    const followed = await lateFollow(true);
    assert.equal(followed.deltas, 3, 'streamed from the first call');
    assert.equal(followed.whole, 0, 'nothing sent twice');
    assert.equal(followed.text, followed.reply);
    assert.match(followed.raw, /\[DONE\]/);
    // Not announced: the call was asked whole; the stream still gives its text, as one delta.
    const unannounced = await lateFollow(false);
    assert.equal(unannounced.deltas, 1);
    assert.equal(unannounced.whole, 1);
    assert.match(unannounced.reply, /^echo: late client/);
    assert.equal(unannounced.text, unannounced.reply);
    assert.doesNotMatch(unannounced.raw, /\[DONE\]/);

    const bad = await fetch(`${keel.url}/v1/tenants/fm/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'w', scope: 'bad', payload: { text }, follow: 'yes' }),
    });
    assert.equal(bad.status, 400);
    assert.match(JSON.stringify(await bad.json()), /follow/);
  });

  it('the default (no stream setting) is "when-watched"; an SSE client that connects late, streamed or not, gets the complete answer', async () => {
    // Nobody watches a run on the default provider: both calls asked whole.
    const created = await client.turns.submit('fm', {
      agent: 'd',
      scope: 'default-late',
      payload: { text: 'default late\n@call clock_now {}\n@stream 3' },
    });
    assert.equal((await client.turns.wait('fm', created.run_id, 20_000)).run.status, 'succeeded');
    const raws = await rawResponses(created.run_id);
    assert.equal(raws.length, 2);
    for (const body of raws) assert.equal((body as Loose).object, 'chat.completion');

    /** Everything a raw SSE client (no keel client library) reads from the run's stream. */
    const readStream = async (runId: string) => {
      const response = await fetch(`${keel.url}/v1/tenants/fm/runs/${runId}/events`);
      assert.equal(response.status, 200);
      const messages = (await response.text())
        .split('\n\n')
        .map((block) => ({
          event: /^event: (.*)$/m.exec(block)?.[1],
          data: /^data: (.*)$/m.exec(block)?.[1],
        }))
        .filter((message) => message.event !== undefined && message.data !== undefined)
        .map((message) => ({
          type: String(message.event),
          data: JSON.parse(String(message.data)),
        }));
      const deltas = messages.filter((message) => message.type === 'model.delta');
      const types = messages.map((message) => message.type);
      return {
        deltas,
        answer: deltas.map((delta) => delta.data.data.text).join(''),
        // Each delta comes just before the response of its call.
        deltaBeforeResponse: types.every(
          (type, index) => type !== 'model.delta' || types[index + 1] === 'model.response',
        ),
        reply: String(messages.at(-1)?.data.data.output.reply),
      };
    };
    // Connected after the run ended: the answer's call (the tool-call step has no text)
    // comes as one whole delta holding the complete answer.
    const late = await readStream(created.run_id);
    assert.match(late.reply, /^echo: default late\nclock_now: /);
    assert.equal(late.deltas.length, 1);
    assert.equal(late.deltas[0]?.data.data.whole, true);
    assert.equal(late.deltas[0]?.data.data.step, 2);
    assert.equal(late.answer, late.reply);
    assert.ok(late.deltaBeforeResponse);

    // A provider that streamed every call (stream = true), its stream long over by the
    // time the client connects: the same.
    const streamed = await client.turns.submit('fm', {
      agent: 'a',
      scope: 'streamed-late',
      payload: { text: 'streamed late\n@stream 4' },
    });
    await client.turns.wait('fm', streamed.run_id, 20_000);
    assert.match(String((await rawResponses(streamed.run_id))[0]), /\[DONE\]/);
    const lateToStream = await readStream(streamed.run_id);
    assert.equal(lateToStream.deltas.length, 1);
    assert.equal(lateToStream.answer, 'echo: streamed late');
    assert.equal(lateToStream.answer, lateToStream.reply);
  });

  it('stream = "when-watched": an OpenAI streaming request is watched from its first call; a whole one is not', async () => {
    const openai = new OpenAI({ apiKey: 'unused', baseURL: `${keel.url}/v1/tenants/fm/openai` });
    const stream = await openai.chat.completions.create({
      model: 'w',
      stream: true,
      messages: [{ role: 'user', content: 'what time\n@call clock_now {}\n@stream 4' }],
    });
    let runId = '';
    let contentChunks = 0;
    for await (const chunk of stream) {
      runId = chunk.id.replace(/^chatcmpl-/, '');
      if ((chunk.choices[0]?.delta.content ?? '').length > 0) contentChunks += 1;
    }
    assert.equal(contentChunks, 4, 'the answer came as the model streamed it');
    const streamed = (await rawResponses(runId)).map((body) => JSON.stringify(body));
    assert.equal(streamed.length, 2);
    for (const body of streamed) assert.match(body, /data: \[DONE\]/);

    const whole = await openai.chat.completions.create({
      model: 'w',
      messages: [{ role: 'user', content: 'what time\n@call clock_now {}\n@stream 4' }],
    });
    const unwatched = (await rawResponses(whole.id.replace(/^chatcmpl-/, ''))).map((body) =>
      JSON.stringify(body),
    );
    assert.equal(unwatched.length, 2);
    for (const body of unwatched) {
      assert.match(body, /^\{"id":.*"object":"chat\.completion"/, 'a JSON body, not SSE text');
      assert.doesNotMatch(body, /\[DONE\]/);
    }
  });
});

// Response bodies are read loosely here; the assertions are the contract.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

describe('keel fixture-model routes', () => {
  const post = (path: string, body: unknown) =>
    fetch(`${model.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  const postJson = async (path: string, body: unknown): Promise<Loose> =>
    (await post(path, body)).json();

  it('non-streamed chat completion with tool calls, then the answer with tool results', async () => {
    const first = await postJson('/v1/chat/completions', {
      model: 'x',
      messages: [{ role: 'user', content: '@call clock_now {}' }],
    });
    const call = first.choices[0].message.tool_calls[0];
    assert.deepEqual(
      [call.function.name, call.function.arguments, first.choices[0].finish_reason],
      ['clock_now', '{}', 'tool_calls'],
    );
    const second = await postJson('/v1/chat/completions', {
      model: 'x',
      messages: [
        { role: 'user', content: '@call clock_now {}' },
        { role: 'assistant', content: null, tool_calls: [call] },
        {
          role: 'tool',
          tool_call_id: call.id,
          content: '{"error":{"code":"TOOL_NOT_FOUND","message":"x"}}',
        },
      ],
    });
    assert.equal(second.choices[0].message.content, 'echo: \nclock_now: TOOL_NOT_FOUND');
    assert.ok(second.usage.total_tokens > 0);
  });

  it('models, deterministic embeddings, 404, and @fail answers with Retry-After', async () => {
    const models = (await (await fetch(`${model.url}/v1/models`)).json()) as Loose;
    assert.equal(models.data[0].id, 'fixture');
    const a = await postJson('/v1/embeddings', {
      input: ['the cat sat', 'the cat sat'],
      model: 'e',
    });
    assert.deepEqual(a.data[0].embedding, a.data[1].embedding);
    assert.equal(a.data[0].embedding.length, 256);
    assert.equal((await post('/v1/nothing', {})).status, 404);
    const limited = await post('/v1/chat/completions', {
      messages: [{ role: 'user', content: '@fail 1 429\nfresh' }],
    });
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after-ms'), '10');
    assert.equal(limited.headers.get('retry-after'), '1');
  });
});
