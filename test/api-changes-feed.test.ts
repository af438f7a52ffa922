// GET T/changes forwards `resource.changed` ({resource, name}) for its own tenant only:
// the console's agents, schedules, deliveries, MCP and wasm views re-read on it.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readSse } from '../src/cli/sse-reader.ts';
import type { ApiServer } from './helpers/api-server.ts';
import { seedTenant, startApiServer } from './helpers/api-server.ts';

describe('GET T/changes: resource changes', () => {
  let server: ApiServer;
  let token = '';
  before(async () => {
    server = await startApiServer();
    ({ token } = await seedTenant(server, 'acme'));
    await seedTenant(server, 'other');
  });
  after(async () => server.close());

  it("names the tenant's agent and schedule writes, and nothing of another tenant", async () => {
    const controller = new AbortController();
    const response = await fetch(`${server.url}/v1/tenants/acme/changes`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      signal: controller.signal,
    });
    assert.equal(response.status, 200);
    assert.ok(response.body);
    const heard: string[] = [];
    const reading = (async () => {
      for await (const event of readSse(response.body as ReadableStream<Uint8Array>)) {
        if (event.event !== 'resource.changed') continue;
        const data = JSON.parse(event.data) as { resource: string; name: string };
        heard.push(`${data.resource}:${data.name}`);
        if (data.name === 'last') return;
      }
    })();
    const put = async (path: string, body: unknown) => {
      const answer = await server.request('PUT', path, { body });
      assert.ok(answer.status < 300, answer.text);
    };
    await put('/v1/tenants/acme/agents/first', { model: 'fixture/echo' });
    await put('/v1/tenants/other/agents/secret', { model: 'fixture/echo' });
    await put('/v1/tenants/acme/schedules/nightly', {
      agent: 'first',
      scope: 'cron',
      every_ms: 3_600_000,
      payload: { text: 'tick' },
    });
    await put('/v1/tenants/acme/agents/last', { model: 'fixture/echo' });
    await reading;
    controller.abort();
    console.log(`T/changes heard: ${heard.join(', ')}`);
    assert.deepEqual(heard, ['agent:first', 'schedule:nightly', 'agent:last']);

    const foreign = await server.request('GET', '/v1/tenants/other/changes', { token });
    assert.equal(foreign.status, 403);
  });
});
