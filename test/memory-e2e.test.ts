// Memory through a whole keel: a turn whose (fixture) model calls the memory tools,
// the facts then visible over REST, and the maintainer's host-enforced rule inside a
// real run (the refused call is a tool result the model sees; the run goes on).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestKeel } from './helpers/keel-server.ts';
import { startTestKeel } from './helpers/keel-server.ts';

let keel: TestKeel;

async function api(
  method: string,
  path: string,
  body?: unknown,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${keel.url}${path}`, {
    method,
    // POST/PUT/PATCH name their content type even without a body (cross-site guard).
    headers: method === 'GET' ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

async function turn(agent: string, text: string): Promise<string> {
  const submitted = await api('POST', '/v1/tenants/home/turns', {
    agent,
    scope: 's1',
    payload: { text },
  });
  assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
  const waited = await api(
    'GET',
    `/v1/tenants/home/runs/${submitted.body.run_id}/wait?timeout_ms=20000`,
  );
  assert.equal(waited.body.run.status, 'succeeded', JSON.stringify(waited.body.run));
  return submitted.body.run_id as string;
}

async function toolResults(runId: string): Promise<{ name: string; ok: boolean; code?: string }[]> {
  const entries = await keel.store.loadEntries(runId);
  return entries
    .filter((entry) => entry.kind === 'tool_result')
    .map((entry) => {
      const body = entry.body as { name: string; ok: boolean; error?: { code: string } };
      return { name: body.name, ok: body.ok, ...(body.error ? { code: body.error.code } : {}) };
    });
}

before(async () => {
  keel = await startTestKeel({ toml: '[memory]\nembedder = "hash"\n' });
  await api('POST', '/v1/tenants', { name: 'home' });
  const agent = await api('PUT', '/v1/tenants/home/agents/assistant', {
    model: 'fixture/echo',
    allowed_families: ['memory'],
  });
  assert.equal(agent.status, 201, JSON.stringify(agent.body));
});
after(async () => {
  await keel?.close();
});

describe('memory end to end', () => {
  it('a model remembers through memory_put and the fact is searchable over REST', async () => {
    const runId = await turn(
      'assistant',
      '@call memory_put {"text": "my dog Rex is a golden retriever"}\nremember this',
    );
    assert.deepEqual(await toolResults(runId), [{ name: 'memory_put', ok: true }]);
    const found = await api('GET', '/v1/tenants/home/memory/default/search?q=golden%20retriever');
    assert.equal(found.status, 200);
    assert.match(found.body.results[0].text, /Rex/);
  });

  it('the maintainer is refused until it has listed the namespace in the same run', async () => {
    const preset = await api('POST', '/v1/tenants/home/presets/memory-maintenance', {
      model: 'fixture/echo',
    });
    assert.equal(preset.status, 201, JSON.stringify(preset.body));
    const refused = await turn(
      'memory-maintainer',
      '@call memory_delete {"namespace": "default", "id": "anything"}\ncleanup',
    );
    assert.deepEqual(await toolResults(refused), [
      { name: 'memory_delete', ok: false, code: 'MEMORY_SCAN_REQUIRED' },
    ]);
    const allowed = await turn(
      'memory-maintainer',
      '@call memory_list {"namespace": "default", "limit": 100}\n@call memory_delete {"namespace": "default", "id": "anything"}\ncleanup',
    );
    assert.deepEqual(await toolResults(allowed), [
      { name: 'memory_list', ok: true },
      { name: 'memory_delete', ok: true },
    ]);
  });
});
