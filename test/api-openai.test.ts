// T/openai: a whole keel (store + worker + API) spoken to by the official `openai` npm
// client and by @ai-sdk/openai-compatible, as any OpenAI app would. The fixture model
// answers `echo: <text>`, so each answer shows which message became the turn.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import OpenAI, { AuthenticationError, NotFoundError } from 'openai';
import type { TestKeel } from './helpers/keel-server.ts';
import { clientGoneAt } from './helpers/client-gone.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import { waitFor } from './helpers/wait-for.ts';

const ADMIN = 'admin-token-for-openai-tests-0123456789';
let keel: TestKeel;
let token: string;
let baseURL: string;

async function admin(method: string, path: string, body: unknown): Promise<unknown> {
  const response = await fetch(`${keel.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const parsed = (await response.json()) as unknown;
  assert.ok(response.ok, JSON.stringify(parsed));
  return parsed;
}

before(async () => {
  keel = await startTestKeel({ env: { KEEL_ADMIN_TOKEN: ADMIN } });
  await admin('POST', '/v1/tenants', { name: 'oa' });
  await admin('PUT', '/v1/tenants/oa/agents/helper', { model: 'fixture/x' });
  await admin('PUT', '/v1/tenants/oa/agents/other', { model: 'fixture/y' });
  ({ token } = (await admin('POST', '/v1/tenants/oa/tokens', { name: 'oa' })) as {
    token: string;
  });
  baseURL = `${keel.url}/v1/tenants/oa/openai`;
});

after(async () => keel.close());

async function thread(agent: string, scope: string): Promise<{ role: string }[]> {
  const response = await fetch(
    `${keel.url}/v1/tenants/oa/threads/${agent}/${encodeURIComponent(scope)}`,
    { headers: { authorization: `Bearer ${token}` } },
  );
  const body = (await response.json()) as { messages?: { role: string }[] };
  assert.equal(response.status, 200, JSON.stringify(body));
  return body.messages ?? [];
}

describe('OpenAI-compatible endpoint', () => {
  it('lists the agents as models', async () => {
    const client = new OpenAI({ apiKey: token, baseURL });
    const ids = [];
    for await (const model of client.models.list()) ids.push(model.id);
    assert.deepEqual(ids.sort(), ['helper', 'other']);
  });

  it('a two-turn conversation (not streaming) takes only the last user message and keeps one thread', async () => {
    const client = new OpenAI({ apiKey: token, baseURL });
    const first = await client.chat.completions.create({
      model: 'helper',
      user: 'alice',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    assert.equal(first.choices[0]?.message.content, 'echo: hello there');
    assert.equal(first.choices[0]?.finish_reason, 'stop');
    const second = await client.chat.completions.create({
      model: 'helper',
      user: 'alice',
      messages: [
        { role: 'system', content: 'ignored: keel has the agent prompt' },
        { role: 'user', content: 'hello there' },
        { role: 'assistant', content: 'echo: hello there' },
        { role: 'user', content: 'and again' },
      ],
    });
    assert.equal(second.choices[0]?.message.content, 'echo: and again');
    // keel keeps the thread: both turns are in scope openai:alice, four messages.
    const messages = await thread('helper', 'openai:alice');
    assert.equal(messages.length, 4, JSON.stringify(messages));
  });

  it('streams a tool-using turn as chunks ending with its final text', async () => {
    const client = new OpenAI({ apiKey: token, baseURL });
    const stream = await client.chat.completions.create({
      model: 'helper',
      stream: true,
      messages: [{ role: 'user', content: 'what time\n@call clock_now {}\n@stream 4' }],
    });
    let text = '';
    let chunks = 0;
    let contentChunks = 0;
    let finish: string | null = null;
    for await (const chunk of stream) {
      chunks += 1;
      const content = chunk.choices[0]?.delta.content ?? '';
      if (content.length > 0) contentChunks += 1;
      text += content;
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    console.log(`streamed ${chunks} chunks, ${contentChunks} with content`);
    assert.match(text, /^echo: what time\nclock_now: \{"utc":[^\n]*\}$/);
    assert.equal(finish, 'stop');
    // The model's deltas were relayed as they came, not one chunk at the end.
    assert.ok(contentChunks >= 2, `expected several content chunks, got ${contentChunks}`);
  });

  it('x-keel-scope chooses the thread', async () => {
    const client = new OpenAI({
      apiKey: token,
      baseURL,
      defaultHeaders: { 'x-keel-scope': 'chat:42' },
    });
    const answer = await client.chat.completions.create({
      model: 'helper',
      messages: [{ role: 'user', content: 'scoped' }],
    });
    assert.equal(answer.choices[0]?.message.content, 'echo: scoped');
    assert.equal((await thread('helper', 'chat:42')).length, 2);
  });

  it('a wrong key gets OpenAI’s 401 shape; an unknown agent a 404', async () => {
    const wrong = new OpenAI({ apiKey: 'not-a-token', baseURL, maxRetries: 0 });
    await assert.rejects(
      wrong.chat.completions.create({
        model: 'helper',
        messages: [{ role: 'user', content: 'x' }],
      }),
      (error: unknown) => {
        assert.ok(error instanceof AuthenticationError);
        assert.equal(error.status, 401);
        assert.equal(error.code, 'UNAUTHENTICATED');
        assert.equal(error.type, 'authentication_error');
        return true;
      },
    );
    const client = new OpenAI({ apiKey: token, baseURL, maxRetries: 0 });
    await assert.rejects(
      client.chat.completions.create({
        model: 'nobody',
        messages: [{ role: 'user', content: 'x' }],
      }),
      (error: unknown) => error instanceof NotFoundError && error.code === 'AGENT_NOT_FOUND',
    );
  });

  it('works with @ai-sdk/openai-compatible as the client, generate and stream', async () => {
    const provider = createOpenAICompatible({ name: 'keel', baseURL, apiKey: token });
    const model = provider.chatModel('other');
    const generated = await model.doGenerate({
      prompt: [{ role: 'user', content: [{ type: 'text', text: 'from ai sdk' }] }],
      headers: { 'x-keel-scope': 'sdk:1' },
    });
    const texts = generated.content.flatMap((part) => (part.type === 'text' ? [part.text] : []));
    assert.deepEqual(texts, ['echo: from ai sdk']);

    const streamed = await model.doStream({
      prompt: [{ role: 'user', content: [{ type: 'text', text: 'streamed\n@stream 3' }] }],
      headers: { 'x-keel-scope': 'sdk:1' },
    });
    let text = '';
    const reader = streamed.stream.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (value.type === 'text-delta') text += value.delta;
    }
    assert.equal(text, 'echo: streamed');
    assert.equal((await thread('other', 'sdk:1')).length, 4);
  });

  it('a client gone while its turn was being queued releases the wait at once, streamed or not', async () => {
    const enqueueRun = keel.store.enqueueRun.bind(keel.store);
    const subscribe = keel.store.subscribe.bind(keel.store);
    let waiting = 0;
    let made = 0;
    keel.store.subscribe = (listener, runId) => {
      waiting += 1;
      made += 1;
      const off = subscribe(listener, runId);
      return () => {
        waiting -= 1;
        off();
      };
    };
    try {
      for (const stream of [false, true]) {
        // Hold the route in its enqueue while the client disconnects.
        let entered = (): void => undefined;
        const inEnqueue = new Promise<void>((resolve) => (entered = resolve));
        let release = (): void => undefined;
        const released = new Promise<void>((resolve) => (release = resolve));
        let runId = '';
        keel.store.enqueueRun = async (input) => {
          entered();
          await released;
          const result = await enqueueRun(input);
          runId = result.run.run_id;
          return result;
        };
        await clientGoneAt(keel.api.server, '/openai/chat/completions', inEnqueue, (signal) =>
          fetch(`${baseURL}/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              model: 'helper',
              stream,
              messages: [{ role: 'user', content: '@sleep 60000\nslow' }],
            }),
            signal,
          }),
        );
        keel.store.enqueueRun = enqueueRun;
        const before = { waiting, made };
        release();
        // The route subscribes to the run's changes for its wait; its client gone, it lets go.
        await waitFor('the route began its wait', () => made > before.made);
        await waitFor(`stream: ${stream} — no wait left behind`, () => waiting === before.waiting, {
          timeoutMs: 5000,
        });
        await fetch(`${keel.url}/v1/tenants/oa/runs/${runId}/cancel`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: '{}',
        });
      }
    } finally {
      keel.store.enqueueRun = enqueueRun;
      keel.store.subscribe = subscribe;
    }
  });
});
