// Tenants, tokens, agents (JSON and TOML) and threads over HTTP: success paths, and
// validation failures that name the field and write nothing.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { emptyUsage } from '../src/types.ts';
import type { ApiServer } from './helpers/api-server.ts';
import { seedTenant, startApiServer, storeSnapshot } from './helpers/api-server.ts';
import { waitFor } from './helpers/wait-for.ts';

async function assertRejected(
  server: ApiServer,
  call: () => Promise<{ status: number; body: { error?: { code: string; message: string } } }>,
  status: number,
  code: string,
  messageIncludes?: string,
): Promise<void> {
  const before = await storeSnapshot(server.store);
  const response = await call();
  assert.equal(response.status, status, JSON.stringify(response.body));
  assert.equal(response.body.error?.code, code);
  if (messageIncludes) assert.ok(response.body.error?.message.includes(messageIncludes));
  assert.equal(await storeSnapshot(server.store), before, 'a rejected request wrote something');
}

describe('tenants', () => {
  let server: ApiServer;
  before(async () => {
    server = await startApiServer();
  });
  after(async () => server.close());

  it('create is idempotent: 201 then 200 with the same tenant', async () => {
    const first = await server.request('POST', '/v1/tenants', {
      body: { name: 'demo', metadata: { plan: 'free' } },
    });
    assert.equal(first.status, 201);
    assert.deepEqual(first.body.tenant.metadata, { plan: 'free' });
    const second = await server.request('POST', '/v1/tenants', { body: { name: 'demo' } });
    assert.equal(second.status, 200);
    assert.equal(second.body.tenant.created_at, first.body.tenant.created_at);
    const list = await server.request('GET', '/v1/tenants');
    const names = list.body.tenants.map((tenant: { name: string }) => tenant.name);
    assert.equal(names.filter((name: string) => name === 'demo').length, 1, names.join(','));
    const got = await server.request('GET', '/v1/tenants/demo');
    assert.equal(got.body.tenant.name, 'demo');
  });

  it('rejects bad names and unknown fields, naming them', async () => {
    await assertRejected(
      server,
      () => server.request('POST', '/v1/tenants', { body: { name: 'Bad Name' } }),
      400,
      'VALIDATION_FAILED',
      'body.name',
    );
    await assertRejected(
      server,
      () => server.request('POST', '/v1/tenants', { body: { name: 'ok', colour: 'red' } }),
      400,
      'UNKNOWN_FIELD',
      'body.colour',
    );
    await assertRejected(
      server,
      () => server.request('POST', '/v1/tenants', { body: { name: 'ok', metadata: [1] } }),
      400,
      'VALIDATION_FAILED',
      'body.metadata',
    );
  });

  it('PATCH replaces metadata and answers 409 CONFLICT on a stale if_updated_at', async () => {
    const current = (await server.request('POST', '/v1/tenants', { body: { name: 'patched' } }))
      .body.tenant;
    // updated_at has millisecond precision: the patch must land in a later millisecond.
    await waitFor(
      'the clock passed updated_at',
      () => new Date().toISOString() > current.updated_at,
    );
    const patched = await server.request('PATCH', '/v1/tenants/patched', {
      body: { metadata: { plan: 'pro' }, if_updated_at: current.updated_at },
    });
    assert.equal(patched.status, 200);
    assert.deepEqual(patched.body.tenant.metadata, { plan: 'pro' });
    await assertRejected(
      server,
      () =>
        server.request('PATCH', '/v1/tenants/patched', {
          body: { metadata: { plan: 'stale' }, if_updated_at: current.updated_at },
        }),
      409,
      'CONFLICT',
    );
    await assertRejected(
      server,
      () => server.request('PATCH', '/v1/tenants/patched', { body: {} }),
      400,
      'VALIDATION_FAILED',
      'body.metadata',
    );
  });

  it('DELETE removes the tenant with its agents, tokens and runs', async () => {
    const { token } = await seedTenant(server, 'doomed');
    const turn = await server.request('POST', '/v1/tenants/doomed/turns', {
      body: { agent: 'assistant', scope: 's', payload: { text: 'x' } },
    });
    assert.equal(turn.status, 202);
    const deleted = await server.request('DELETE', '/v1/tenants/doomed');
    assert.deepEqual(deleted.body, { deleted: true });
    assert.equal((await server.request('GET', '/v1/tenants/doomed')).status, 404);
    assert.equal(await server.store.getTenant('doomed'), null);
    assert.deepEqual((await server.store.listAgents('doomed', 200)).items, []);
    assert.deepEqual(await server.store.listTokens('doomed'), []);
    assert.equal(await server.store.getRun('doomed', turn.body.run_id), null);
    const withToken = await server.request('GET', '/v1/tenants/doomed/agents', { token });
    assert.equal(withToken.status, 401);
    assert.equal((await server.request('DELETE', '/v1/tenants/doomed')).status, 404);
  });
});

describe('agents', () => {
  let server: ApiServer;
  const agentPath = '/v1/tenants/demo/agents/helper';
  before(async () => {
    // A configured provider: a model may only name one that exists (test/agent-names.test.ts).
    const ollama = { type: 'openai-compatible' as const, base_url: 'http://127.0.0.1:9/v1' };
    server = await startApiServer({ config: { providers: { ollama } } });
    await server.request('POST', '/v1/tenants', { body: { name: 'demo' } });
  });
  after(async () => server.close());

  it('PUT via JSON applies every default: 201 created, 200 replaced', async () => {
    const created = await server.request('PUT', agentPath, { body: { model: 'fixture/echo' } });
    assert.equal(created.status, 201);
    const agent = created.body.agent;
    assert.equal(agent.name, 'helper');
    assert.equal(agent.tenant, 'demo');
    assert.equal(agent.max_steps, 12);
    assert.equal(agent.timeout_ms, 120_000);
    assert.equal(agent.tool_timeout_ms, 30_000);
    assert.equal(agent.temperature, 0.2);
    assert.equal(agent.max_tokens, 4096);
    assert.equal(agent.context_window, 20);
    assert.equal(agent.on_uncertain_effect, 'tell_model');
    const replaced = await server.request('PUT', agentPath, {
      body: {
        model: 'ollama/qwen3:8b',
        persona: 'terse',
        allowed_families: [],
        allowed_tools: ['clock_now'],
        max_steps: 3,
        context_window: 0,
        output_schema: { type: 'object', required: ['reply'] },
        on_uncertain_effect: 'fail',
      },
    });
    assert.equal(replaced.status, 200);
    assert.deepEqual(replaced.body.agent.allowed_families, []);
    assert.deepEqual(replaced.body.agent.output_schema, { type: 'object', required: ['reply'] });
    const got = await server.request('GET', agentPath);
    assert.equal(got.body.agent.model, 'ollama/qwen3:8b');
    assert.equal(got.body.agent.max_steps, 3);
  });

  it('PUT via TOML applies defaults', async () => {
    const toml = [
      'model = "fixture/echo"',
      'persona = """',
      'You help.',
      '"""',
      'max_steps = 5',
      'allowed_families = ["clock"]',
      '[output_schema]',
      'type = "object"',
    ].join('\n');
    const response = await server.request('PUT', '/v1/tenants/demo/agents/tomlish', {
      body: toml,
      contentType: 'application/toml',
    });
    assert.equal(response.status, 201, response.text);
    assert.equal(response.body.agent.max_steps, 5);
    assert.equal(response.body.agent.persona, 'You help.\n');
    assert.equal(response.body.agent.temperature, 0.2);
    assert.deepEqual(response.body.agent.output_schema, { type: 'object' });
  });

  it('rejects bad TOML with its position, unknown keys and out-of-range values by name', async () => {
    await assertRejected(
      server,
      () =>
        server.request('PUT', agentPath, {
          body: 'model = "fixture/echo"\nmax_steps = = 3\n',
          contentType: 'application/toml',
        }),
      400,
      'INVALID_TOML',
      'line 2, column',
    );
    await assertRejected(
      server,
      () =>
        server.request('PUT', agentPath, {
          body: 'model = "fixture/echo"\nmax_stepz = 3\n',
          contentType: 'application/toml',
        }),
      400,
      'UNKNOWN_FIELD',
      'body.max_stepz',
    );
    await assertRejected(
      server,
      () => server.request('PUT', agentPath, { body: { model: 'fixture/echo', max_steps: 201 } }),
      400,
      'VALIDATION_FAILED',
      'body.max_steps',
    );
    await assertRejected(
      server,
      () => server.request('PUT', agentPath, { body: { model: 'no-slash' } }),
      400,
      'VALIDATION_FAILED',
      'body.model',
    );
    await assertRejected(
      server,
      () =>
        server.request('PUT', agentPath, {
          body: { model: 'fixture/echo', output_schema: ['not', 'an', 'object'] },
        }),
      400,
      'VALIDATION_FAILED',
      'body.output_schema',
    );
    await assertRejected(
      server,
      () => server.request('PUT', agentPath, { body: { max_steps: 3 } }),
      400,
      'VALIDATION_FAILED',
      'body.model',
    );
    await assertRejected(
      server,
      () => server.request('PUT', '/v1/tenants/demo/agents/Bad', { body: { model: 'a/b' } }),
      400,
      'VALIDATION_FAILED',
      'params.agent',
    );
  });

  it('TOML is accepted only where a route opts in', async () => {
    await assertRejected(
      server,
      () =>
        server.request('POST', '/v1/tenants', {
          body: 'name = "tomltenant"',
          contentType: 'application/toml',
        }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
  });

  it('lists and deletes agents', async () => {
    for (const name of ['listed-a', 'listed-b']) {
      const put = await server.request('PUT', `/v1/tenants/demo/agents/${name}`, {
        body: { model: 'fixture/echo' },
      });
      assert.equal(put.status, 201);
    }
    const names = async (): Promise<string[]> =>
      (await server.request('GET', '/v1/tenants/demo/agents')).body.agents.map(
        (agent: { name: string }) => agent.name,
      );
    assert.deepEqual((await names()).filter((name) => name.startsWith('listed-')).sort(), [
      'listed-a',
      'listed-b',
    ]);
    const deleted = await server.request('DELETE', '/v1/tenants/demo/agents/listed-b');
    assert.deepEqual(deleted.body, { deleted: true });
    assert.ok(!(await names()).includes('listed-b'));
    const missing = await server.request('GET', '/v1/tenants/demo/agents/listed-b');
    assert.equal(missing.body.error.code, 'AGENT_NOT_FOUND');
    const again = await server.request('DELETE', '/v1/tenants/demo/agents/listed-b');
    assert.equal(again.status, 404);
  });
});

describe('threads', () => {
  let server: ApiServer;
  const scope = 'tg:42/topic ü?#%';
  before(async () => {
    server = await startApiServer();
    await seedTenant(server, 'demo');
  });
  after(async () => server.close());

  it('lists, gets (percent-encoded scope) and deletes a thread', async () => {
    const turn = await server.request('POST', '/v1/tenants/demo/turns', {
      body: { agent: 'assistant', scope, payload: { text: 'remember me' } },
    });
    assert.equal(turn.status, 202);
    const claimed = await server.store.claimNextRun({ owner: 'test', lease_ms: 30_000 });
    assert.ok(claimed);
    await server.store.finalizeRun(
      { run_id: claimed.run.run_id, attempt: claimed.run.attempt },
      {
        status: 'succeeded',
        output: { reply: 'noted' },
        reply_text: 'noted',
        steps: 1,
        usage: emptyUsage(),
        elapsed_ms: 1,
        context_window: 20,
      },
    );
    const list = await server.request('GET', '/v1/tenants/demo/threads/assistant');
    assert.equal(list.status, 200);
    assert.equal(list.body.threads.length, 1);
    assert.equal(list.body.threads[0].scope, scope);
    assert.equal(list.body.next_cursor, null);

    const path = `/v1/tenants/demo/threads/assistant/${encodeURIComponent(scope)}`;
    const thread = await server.request('GET', path);
    assert.equal(thread.status, 200, thread.text);
    assert.equal(thread.body.scope, scope);
    assert.deepEqual(
      thread.body.messages.map((message: { role: string; content: string }) => [
        message.role,
        message.content,
      ]),
      [
        ['user', 'remember me'],
        ['assistant', 'noted'],
      ],
    );
    assert.deepEqual((await server.request('DELETE', path)).body, { deleted: true });
    const gone = await server.request('GET', path);
    assert.equal(gone.body.error.code, 'THREAD_NOT_FOUND');
    // Forgetting the context keeps the run.
    const run = await server.request('GET', `/v1/tenants/demo/runs/${turn.body.run_id}`);
    assert.equal(run.body.run.status, 'succeeded');
  });

  it('rejects a scope with control characters and a bad limit', async () => {
    const bad = await server.request(
      'GET',
      `/v1/tenants/demo/threads/assistant/${encodeURIComponent('a\u0001b')}`,
    );
    assert.equal(bad.body.error.code, 'VALIDATION_FAILED');
    assert.ok(bad.body.error.message.includes('params.scope'));
    // The longest scope (256 bytes, 768 characters percent-encoded) still reaches the route.
    const longest = 'é'.repeat(128);
    const path = (scope: string): string =>
      `/v1/tenants/demo/threads/assistant/${encodeURIComponent(scope)}`;
    assert.equal((await server.request('GET', path(longest))).body.error.code, 'THREAD_NOT_FOUND');
    const tooLong = await server.request('GET', path(`${longest}x`));
    assert.ok(tooLong.body.error.message.includes('params.scope'));
    const limit = await server.request('GET', '/v1/tenants/demo/threads/assistant?limit=999');
    assert.ok(limit.body.error.message.includes('querystring.limit'));
  });
});
