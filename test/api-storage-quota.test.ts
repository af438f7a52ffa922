// Per-tenant storage quotas through a whole keel (startKeel: config → routes, memory
// service and tool ports): past [tenant_limits] artifact_bytes / memory_bytes a write is
// 403 QUOTA_EXCEEDED naming the limit and writes nothing, a delete frees the space, other
// tenants are untouched, and the artifact and memory tools answer a tool error the model
// can act on. (Exactness under races: store conformance, storage-quota.suite.ts.)

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createHashEmbedder } from '../src/memory/embedders/hash.ts';
import { MaintenanceScans } from '../src/memory/maintenance.ts';
import { createMemoryService } from '../src/memory/service.ts';
import { builtinTools } from '../src/tools/builtin/index.ts';
import type { TestKeel } from './helpers/keel-server.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import { toolContext } from './helpers/tool-context.ts';

const TOML = '[tenant_limits]\nmemory_bytes = 100\nartifact_bytes = 1000\n';

describe('storage quotas over HTTP', () => {
  let keel: TestKeel;
  before(async () => {
    keel = await startTestKeel({ toml: TOML, keel: { embedder: createHashEmbedder() } });
    for (const name of ['t1', 't2']) {
      const created = await call('POST', '/v1/tenants', JSON.stringify({ name }));
      assert.equal(created.status, 201);
    }
  });
  after(() => keel.close());

  async function call(
    method: string,
    path: string,
    body?: string,
    contentType = 'application/json',
  ): Promise<{ status: number; body: { error?: { code: string; message: string } } }> {
    const response = await fetch(`${keel.url}${path}`, {
      method,
      ...(body === undefined ? {} : { body, headers: { 'content-type': contentType } }),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : {} };
  }

  const putArtifact = (tenant: string, path: string, bytes: number) =>
    call('PUT', `/v1/tenants/${tenant}/artifacts/${path}`, 'a'.repeat(bytes), 'text/plain');
  const putFact = (tenant: string, id: string, text: string) =>
    call('PUT', `/v1/tenants/${tenant}/memory/default/${id}`, JSON.stringify({ text }));

  it('artifacts: past artifact_bytes → 403 QUOTA_EXCEEDED, nothing written; a delete frees', async () => {
    assert.equal((await putArtifact('t1', 'a.txt', 600)).status, 201);
    const refused = await putArtifact('t1', 'b.txt', 401);
    console.log(`artifact past the quota: ${refused.status} ${refused.body.error?.code}`);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error?.code, 'QUOTA_EXCEEDED');
    assert.match(refused.body.error?.message ?? '', /tenant_limits\.artifact_bytes/);
    assert.equal((await call('GET', '/v1/tenants/t1/artifacts/b.txt')).status, 404);
    assert.equal((await putArtifact('t2', 'b.txt', 1000)).status, 201, 't2 has its own quota');
    assert.equal((await call('DELETE', '/v1/tenants/t1/artifacts/a.txt')).status, 200);
    assert.equal((await putArtifact('t1', 'b.txt', 1000)).status, 201);
  });

  it('memory: past memory_bytes → 403 QUOTA_EXCEEDED, nothing written; a delete frees', async () => {
    // Each fact counts its text + "{}" metadata: 60 + 2 bytes.
    assert.equal((await putFact('t1', 'f1', 'x'.repeat(60))).status, 201);
    const refused = await putFact('t1', 'f2', 'y'.repeat(60));
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error?.code, 'QUOTA_EXCEEDED');
    assert.match(refused.body.error?.message ?? '', /tenant_limits\.memory_bytes/);
    assert.equal((await call('GET', '/v1/tenants/t1/memory/default/f2')).status, 404);
    assert.equal((await call('DELETE', '/v1/tenants/t1/memory/default/f1')).status, 200);
    assert.equal((await putFact('t1', 'f2', 'y'.repeat(60))).status, 201);
  });

  it('the artifact_write and memory_put tools answer a QUOTA_EXCEEDED tool error', async () => {
    const tools = new Map(builtinTools().map((tool) => [tool.name, tool]));
    const service = createMemoryService({
      store: keel.store,
      embedder: createHashEmbedder(),
      maxBytesPerTenant: 100,
    });
    const context = toolContext(
      {
        store: keel.store,
        memory: { service, scans: new MaintenanceScans() },
        maxArtifactBytes: 1000,
      },
      { tenant: 't2' },
    );
    const failure = async (name: string, input: unknown) => {
      const tool = tools.get(name);
      assert.ok(tool, name);
      const parsed = (tool.input as unknown as { parse(value: unknown): never }).parse(input);
      try {
        await tool.run(parsed, context);
      } catch (error) {
        return error as { name: string; code: string; message: string };
      }
      throw new Error(`${name} should have failed`);
    };
    // t2 already holds 1000 artifact bytes (the first test).
    const artifact = await failure('artifact_write', { path: 'more.txt', content: 'x' });
    assert.equal(artifact.name, 'ToolError');
    assert.equal(artifact.code, 'QUOTA_EXCEEDED');
    assert.match(artifact.message, /artifact_bytes/);
    await service.put('t2', 'default', 'big', 'z'.repeat(98));
    const memory = await failure('memory_put', { text: 'one more fact' });
    assert.equal(memory.name, 'ToolError');
    assert.equal(memory.code, 'QUOTA_EXCEEDED');
    assert.match(memory.message, /memory_bytes/);
  });
});
