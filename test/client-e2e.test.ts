// keel/client against a real keel (issue 20): the demo's flow — tenant, agent, submit a
// turn with a delivery, stream its events (and resume with Last-Event-ID), wait, claim and
// ack the delivery — plus a tour of the other resources. Every response the client got
// is validated with ajv against the response schema /openapi.json documents for it.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { RunEvent } from '../src/client/index.ts';
import { KeelApiError, createKeelClient } from '../src/client/index.ts';
import type { TestKeel } from './helpers/keel-server.ts';
import { startTestKeel } from './helpers/keel-server.ts';

type Json = Record<string, unknown>;
interface Sample {
  method: string;
  path: string;
  status: number;
  contentType: string;
  body: unknown;
}

const TENANT = 'clienttour';
let keel: TestKeel;
const samples: Sample[] = [];

/** A fetch that records every JSON answer (the stream and bytes routes are not JSON). */
const recordingFetch: typeof fetch = async (input, init) => {
  const request = new Request(input, init);
  const response = await fetch(request);
  const contentType = response.headers.get('content-type') ?? '';
  if (contentType.includes('application/json')) {
    const body: unknown = await response.clone().json();
    samples.push({
      method: request.method,
      path: new URL(request.url).pathname,
      status: response.status,
      contentType,
      body,
    });
  }
  return response;
};

before(async () => {
  keel = await startTestKeel({ toml: '[memory]\nembedder = "hash"\n' });
});
after(async () => {
  await keel.close();
});

async function collect(iterator: AsyncGenerator<RunEvent>, limit = Infinity): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  for await (const event of iterator) {
    events.push(event);
    if (events.length >= limit) break;
  }
  return events;
}

describe('keel/client', () => {
  it("drives the demo's flow: submit, stream, wait, claim and ack a delivery", async () => {
    const client = createKeelClient({ baseUrl: keel.url, fetch: recordingFetch });
    await client.tenants.create({ name: TENANT });
    await client.agents.put(TENANT, 'helper', { model: 'fixture/echo' });
    const submitted = await client.turns.submit(TENANT, {
      agent: 'helper',
      scope: 'chat-1',
      payload: { text: 'hello\n@call clock_now {}' },
      request_id: 'client-e2e-1',
      delivery: { destination: 'test:1' },
    });
    assert.equal(submitted.deduplicated, false);

    const events = await collect(client.turns.events(TENANT, submitted.run_id));
    const types = events.map((event) => event.type);
    assert.equal(types.at(-1), 'run.succeeded', types.join(', '));
    const persisted = events.filter((event) => event.seq !== undefined);

    // Resume after the second persisted event: the rest, nothing twice.
    const resumeAt = persisted[1]!.seq!;
    const resumed = await collect(
      client.turns.events(TENANT, submitted.run_id, { lastEventId: resumeAt }),
    );
    assert.deepEqual(
      resumed.filter((event) => event.seq !== undefined).map((event) => event.seq),
      persisted.filter((event) => event.seq! > resumeAt).map((event) => event.seq),
    );
    console.log(`# ${persisted.length} persisted events; resumed after seq ${resumeAt}`);

    const waited = await client.turns.wait(TENANT, submitted.run_id, 10_000);
    assert.equal(waited.timed_out, false);
    assert.equal(waited.run.status, 'succeeded');

    const claimed = await client.deliveries.claim(TENANT, { limit: 5 });
    assert.equal(claimed.deliveries.length, 1);
    const delivery = claimed.deliveries[0]!;
    assert.equal(delivery.run_id, submitted.run_id);
    const acked = await client.deliveries.ack(TENANT, delivery.delivery_id, {
      claim_token: delivery.claim_token,
      outcome: 'delivered',
    });
    assert.equal((acked.delivery as { status: string }).status, 'delivered');

    // keel's error shape becomes KeelApiError with the catalogue code.
    await assert.rejects(client.runs.get(TENANT, 'no-such-run'), (error: unknown) => {
      assert.ok(error instanceof KeelApiError);
      assert.equal(error.code, 'RUN_NOT_FOUND');
      assert.equal(error.status, 404);
      return true;
    });
  });

  it('tours the other resources', async () => {
    const client = createKeelClient({ baseUrl: keel.url, fetch: recordingFetch });
    await client.tenants.list();
    await client.tenants.get(TENANT);
    await client.tenants.update(TENANT, { metadata: { team: 'a' } });
    await client.tenants.mintToken(TENANT, { name: 'laptop' });
    await client.tenants.overview(TENANT);
    await client.api.GET('/v1/whoami');
    await client.api.GET('/v1/overview');
    await client.api.GET('/v1/tenants/{tenant}/tokens', { params: { path: { tenant: TENANT } } });
    await client.api.GET('/v1/tenants/{tenant}/tools', { params: { path: { tenant: TENANT } } });
    await client.agents.list(TENANT);
    await client.agents.get(TENANT, 'helper');
    const runs = await client.runs.list(TENANT);
    const runId = runs.runs[0]!.run_id;
    await client.runs.get(TENANT, runId);
    await client.runs.trace(TENANT, runId);
    await client.runs.entries(TENANT, runId);
    await client.runs.cancel(TENANT, runId);
    await client.runs.fork(TENANT, runId, { at_step: 1 });
    await client.threads.list(TENANT, 'helper');
    await client.threads.get(TENANT, 'helper', 'chat-1');
    await client.deliveries.list(TENANT);
    await client.approvals.list(TENANT);
    await client.approvals.forRun(TENANT, runId);
    await client.memory.put(TENANT, 'notes', 'f1', { text: 'the sky is blue' });
    await client.memory.get(TENANT, 'notes', 'f1');
    await client.memory.list(TENANT, 'notes');
    await client.memory.search(TENANT, 'notes', { q: 'sky' });
    await client.memory.delete(TENANT, 'notes', 'f1');
    await client.artifacts.put(TENANT, 'docs/a.txt', 'hello', 'text/plain');
    await client.artifacts.list(TENANT);
    assert.equal(
      new TextDecoder().decode((await client.artifacts.get(TENANT, 'docs/a.txt')).body),
      'hello',
    );
    await client.artifacts.delete(TENANT, 'docs/a.txt');
    await client.schedules.put(TENANT, 'daily', {
      agent: 'helper',
      scope: 'daily',
      payload: { text: 'hi' },
      every_ms: 3_600_000,
    });
    await client.schedules.get(TENANT, 'daily');
    await client.schedules.list(TENANT);
    await client.schedules.trigger(TENANT, 'daily');
    await client.schedules.delete(TENANT, 'daily');
    await client.mcp.list(TENANT);
    await client.wasmTools.list(TENANT);
    await client.threads.delete(TENANT, 'helper', 'chat-1');

    const api = client.api;
    const tenant = { tenant: TENANT };
    await api.PUT('/v1/tenants/{tenant}/secrets/{name}', {
      params: { path: { ...tenant, name: 'API_KEY' } },
      body: { value: 's3cret' },
    });
    await api.GET('/v1/tenants/{tenant}/secrets', { params: { path: tenant } });
    await api.DELETE('/v1/tenants/{tenant}/secrets/{name}', {
      params: { path: { ...tenant, name: 'API_KEY' } },
    });
    const hook = { path: { ...tenant, name: 'hook' } };
    await api.PUT('/v1/tenants/{tenant}/webhooks/{name}', {
      params: hook,
      body: { url: 'https://example.com/hook' },
    });
    await api.GET('/v1/tenants/{tenant}/webhooks/{name}', { params: hook });
    await api.GET('/v1/tenants/{tenant}/webhooks', { params: { path: tenant } });
    await api.POST('/v1/tenants/{tenant}/webhooks/{name}/rotate', { params: hook });
    await api.DELETE('/v1/tenants/{tenant}/webhooks/{name}', { params: hook });
    await api.GET('/v1/tenants/{tenant}/openai/models', { params: { path: tenant } });
    const completion = await api.POST('/v1/tenants/{tenant}/openai/chat/completions', {
      params: { path: tenant },
      body: { model: 'helper', messages: [{ role: 'user', content: 'hi' }] },
    });
    assert.equal(completion.response.status, 200, JSON.stringify(completion.error));
    await api.POST('/v1/tenants/{tenant}/presets/memory-maintenance', {
      params: { path: tenant },
      body: { model: 'fixture/echo' },
    });
    // Error answers are recorded too and must match their documented shape.
    await assert.rejects(client.mcp.get(TENANT, 'nope'), KeelApiError);
    await assert.rejects(client.wasmTools.get(TENANT, 'nope'), KeelApiError);
    await assert.rejects(client.deliveries.retry(TENANT, 'nope'), KeelApiError);
    await assert.rejects(
      client.approvals.decide(TENANT, runId, 'call-x', { decision: 'approve' }),
      KeelApiError,
    );
    await assert.rejects(client.mcp.delete(TENANT, 'nope'), KeelApiError);
    await assert.rejects(client.wasmTools.delete(TENANT, 'nope'), KeelApiError);
    const tokens = await api.GET('/v1/tenants/{tenant}/tokens', { params: { path: tenant } });
    await api.DELETE('/v1/tenants/{tenant}/tokens/{id}', {
      params: { path: { ...tenant, id: tokens.data!.tokens[0]!.id } },
    });
    await client.agents.delete(TENANT, 'helper');
    await client.tenants.create({ name: 'clienttour-gone' });
    await client.tenants.delete('clienttour-gone');
  });

  it('every recorded answer matches the schema the document gives for it', async () => {
    const response = await fetch(`${keel.url}/openapi.json`);
    const document = (await response.json()) as {
      paths: Record<
        string,
        Record<
          string,
          { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }
        >
      >;
      components: { schemas: Json };
    };
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    const rewrite = (schema: unknown): unknown =>
      JSON.parse(
        JSON.stringify(schema).replaceAll(
          '"#/components/schemas/',
          '"openapi#/components/schemas/',
        ),
      );
    ajv.addSchema({ $id: 'openapi', components: rewrite(document.components) });
    const templates = Object.keys(document.paths).map((template) => ({
      template,
      pattern: new RegExp(
        `^${template.replace(/\{path\}$/, '.+').replace(/\{[^}]+\}/g, '[^/]+')}$`,
      ),
    }));
    const problems: string[] = [];
    const covered = new Set<string>();
    for (const sample of samples) {
      const path = sample.path;
      // The most specific template: the fewest parameters.
      const match = templates
        .filter((entry) => entry.pattern.test(path))
        .sort(
          (a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0),
        )[0];
      const where = `${sample.method} ${path} ${sample.status}`;
      if (!match) {
        problems.push(`${where}: no documented route`);
        continue;
      }
      const operation = document.paths[match.template]![sample.method.toLowerCase()];
      const schema =
        operation?.responses[String(sample.status)]?.content?.['application/json']?.schema;
      if (!schema) {
        problems.push(`${where}: status not documented`);
        continue;
      }
      covered.add(`${sample.method} ${match.template}`);
      const validate = ajv.compile(rewrite(schema) as Json);
      if (!validate(sample.body)) {
        problems.push(`${where}: ${ajv.errorsText(validate.errors)}`);
      }
    }
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const missing = operations.filter((operation) => !covered.has(operation));
    console.log(
      `# ${samples.length} answers validated; ${covered.size}/${operations.length} operations sampled as JSON; not sampled: ${missing.join(', ')}`,
    );
    assert.deepEqual(problems, []);
    assert.ok(covered.size >= 40, `${covered.size} operations sampled`);
  });
});
