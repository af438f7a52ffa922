// Input checks and quotas found by attacking keel (issue item 5), over real HTTP:
//   * POST T/schedules/:name/trigger counts against tenant_limits.queued_runs like a turn;
//   * names spelled like Object.prototype properties (constructor, tostring …) are names
//     like any other for every kind that is looked up by name — never a 500;
//   * control characters other than tab, LF and CR are refused in an agent's persona
//     and in tenant and memory metadata.
// NUL in any field, on both backends: input-nul.test.ts. allow_hosts ports:
// web-allow-hosts.test.ts.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEmbedder } from '../src/memory/embedders/create.ts';
import type { TestKeel } from './helpers/keel-server.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import { waitFor } from './helpers/wait-for.ts';
import { requestJson } from './helpers/json-request.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

let keel: TestKeel;

function call(method: string, path: string, body?: unknown) {
  return requestJson(
    keel.url,
    method,
    path.startsWith('/v1') ? path : `/v1/tenants/acme${path}`,
    body,
  );
}

before(async () => {
  // One worker, kept busy by a sleeping run: the runs after it stay queued.
  keel = await startTestKeel({
    toml: '[workers]\nconcurrency = 1\n[tenant_limits]\nqueued_runs = 2\n[mcp]\nallow_hosts = ["127.0.0.1"]\n',
  });
  assert.equal((await call('POST', '/v1/tenants', { name: 'acme' })).status, 201);
  assert.equal((await call('PUT', '/agents/a', { model: 'fixture/echo' })).status, 201);
});
after(() => keel.close());

describe('input checks and quotas', () => {
  it('a schedule trigger past tenant_limits.queued_runs is 429 RATE_LIMITED and writes nothing', async () => {
    const put = await call('PUT', '/schedules/hourly', {
      agent: 'a',
      scope: 'sched',
      every_ms: 3_600_000,
      payload: { text: 'tick' },
    });
    assert.equal(put.status, 201, put.text);
    const sleeping = { text: '@sleep 60000' };
    const busy = await call('POST', '/turns', { agent: 'a', scope: 'busy', payload: sleeping });
    assert.equal(busy.status, 202, busy.text);
    await waitFor('the first run holds the one worker', async () => {
      const run = await call('GET', `/runs/${busy.body.run_id}`);
      return run.body.run.status === 'running';
    });
    for (const scope of ['q1', 'q2']) {
      const turn = await call('POST', '/turns', { agent: 'a', scope, payload: sleeping });
      assert.equal(turn.status, 202, turn.text);
    }
    const before = (await call('GET', '/schedules/hourly')).body.schedule;
    const refused = await call('POST', '/schedules/hourly/trigger', { request_id: 'tr-1' });
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.body.error.code, 'RATE_LIMITED');
    assert.match(refused.body.error.message, /queued_runs/);
    const runs = (await call('GET', '/runs?status=queued')).body.runs as Loose[];
    console.log(`queued runs after the refused trigger: ${runs.length} (limit 2)`);
    assert.equal(runs.length, 2);
    assert.equal((await call('GET', '/runs')).body.runs.length, 3, 'no run written');
    assert.deepEqual((await call('GET', '/schedules/hourly')).body.schedule, before);
    // The request id was not spent: once there is room, the same trigger runs.
    const [first] = runs;
    assert.equal((await call('POST', `/runs/${first.run_id}/cancel`, {})).status, 200);
    const again = await call('POST', '/schedules/hourly/trigger', { request_id: 'tr-1' });
    assert.equal(again.status, 202, again.text);
    for (const run of (await call('GET', '/runs')).body.runs as Loose[]) {
      await call('POST', `/runs/${run.run_id}/cancel`, {});
    }
  });

  it('names like Object.prototype properties are plain names for every named kind (never 500)', async () => {
    const statuses: string[] = [];
    const expect = async (
      method: string,
      path: string,
      body: unknown,
      wanted: number,
    ): Promise<Loose> => {
      const answer = await call(method, path, body);
      statuses.push(`${method} ${path} ${answer.status}`);
      assert.equal(answer.status, wanted, `${method} ${path}: ${answer.text}`);
      return answer.body;
    };
    for (const name of ['constructor', 'tostring', 'valueof', 'prototype', 'hasownproperty']) {
      // A stdio server nobody declared: the same 400 whatever the name.
      const stdio = await expect(
        'PUT',
        `/mcp/${name}`,
        { transport: { type: 'stdio', server: name } },
        400,
      );
      assert.match(stdio.error.message, /no stdio MCP server/);
      const http = { type: 'http', url: 'http://127.0.0.1:9/mcp' };
      await expect('PUT', `/mcp/${name}`, { enabled: false, transport: http }, 201);
      await expect('GET', `/mcp/${name}`, undefined, 200);
      await expect('DELETE', `/mcp/${name}`, undefined, 200);
      await expect('PUT', `/secrets/${name}`, { value: 'v' }, 201);
      await expect('DELETE', `/secrets/${name}`, undefined, 200);
      await expect('PUT', `/agents/${name}`, { model: 'fixture/echo' }, 201);
      await expect('GET', `/agents/${name}`, undefined, 200);
      await expect('GET', `/wasm-tools/${name}`, undefined, 404);
      await expect('GET', `/webhooks/${name}`, undefined, 404);
      await expect('GET', `/threads/${name}/s`, undefined, 404);
      await expect('PUT', `/agents/${name}`, { model: `${name}/echo` }, 400);
      await expect('DELETE', `/agents/${name}`, undefined, 200);
    }
    console.log(`${statuses.length} requests, none 500`);
    // An operator's embedder naming an undeclared provider called "constructor".
    assert.throws(
      () =>
        createEmbedder({
          data_dir: keel.dir,
          providers: {},
          provider_keys: {},
          memory: { embedder: 'openai:constructor/text-embedding-3-small' },
        }),
      /provider "constructor" is not declared/,
    );
  });

  it('an agent persona with a control character other than tab, LF, CR is a 400 naming body.persona', async () => {
    for (const persona of ['be \u0007kind', 'be \u001b[31mred', 'DEL\u007f', 'C1\u0085']) {
      const put = await call('PUT', '/agents/p', { model: 'fixture/echo', persona });
      assert.equal(put.status, 400, `${JSON.stringify(persona)}: ${put.text}`);
      assert.equal(put.body.error.code, 'VALIDATION_FAILED');
      assert.match(put.body.error.message, /body\.persona/);
    }
    assert.equal((await call('GET', '/agents/p')).status, 404, 'nothing stored');
    const fine = await call('PUT', '/agents/p', {
      model: 'fixture/echo',
      persona: 'line one\r\nline two\n\tindented — ünïcode ✓',
    });
    assert.equal(fine.status, 201, fine.text);
  });

  it('tenant and memory metadata with a control character is a 400 naming the key', async () => {
    const tenant = await call('POST', '/v1/tenants', {
      name: 'ctl',
      metadata: { owner: { note: 'a\u001bb' } },
    });
    assert.equal(tenant.status, 400, tenant.text);
    assert.match(tenant.body.error.message, /body\.metadata\.owner\.note/);
    assert.equal((await call('GET', '/v1/tenants/ctl')).status, 404, 'nothing stored');
    const patch = await call('PATCH', '/v1/tenants/acme', { metadata: { 'k\u0001': 'v' } });
    assert.equal(patch.status, 400, patch.text);
    assert.deepEqual((await call('GET', '/v1/tenants/acme')).body.tenant.metadata, {});
    const fact = await call('PUT', '/memory/notes/f1', {
      text: 'a fact',
      metadata: { tags: ['ok', 'b\u0008d'] },
    });
    assert.equal(fact.status, 400, fact.text);
    assert.match(fact.body.error.message, /body\.metadata\.tags\.1/);
    const fine = await call('PATCH', '/v1/tenants/acme', {
      metadata: { note: 'tab\tand\nnewline' },
    });
    assert.equal(fine.status, 200, fine.text);
  });
});
