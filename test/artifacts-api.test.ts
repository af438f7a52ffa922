// Artifacts over HTTP (round trip, ETag/304, paging with prefix, traversal, size limit,
// tenancy) and the three artifact tools (limits, binary → reference).

import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { artifactListTool } from '../src/tools/builtin/artifact-list.ts';
import { artifactReadTool } from '../src/tools/builtin/artifact-read.ts';
import { artifactWriteTool } from '../src/tools/builtin/artifact-write.ts';
import type { AnyToolSpec, ToolContext } from '../src/tools/tool.ts';
import type { ApiServer } from './helpers/api-server.ts';
import { seedTenant, startApiServer, storeSnapshot } from './helpers/api-server.ts';
import { toolContext } from './helpers/tool-context.ts';

/** Raw bytes out, raw bytes back (the JSON helper would parse or re-encode them). */
function raw(
  server: ApiServer,
  method: string,
  path: string,
  body?: Buffer,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const all: Record<string, string> = {
      authorization: `Bearer ${server.adminToken}`,
      ...headers,
    };
    if (body) all['content-length'] = String(body.length);
    // host/port/path options, not a URL string: a URL would be normalised by the client
    // first ("a/%2E%2E/b" → "b"), and the server must see the traversal as sent.
    const { hostname, port } = new URL(server.url);
    const req = httpRequest({ hostname, port, path, method, headers: all }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('artifacts over HTTP', () => {
  let server: ApiServer;
  const T = '/v1/tenants/acme';
  before(async () => {
    server = await startApiServer({
      config: { limits: { turn_body_bytes: 1_048_576, artifact_bytes: 4096 } } as never,
    });
    await seedTenant(server, 'acme');
    await seedTenant(server, 'other');
  });
  after(() => server.close());

  it('round trip with content type, ETag and If-None-Match', async () => {
    const bytes = Buffer.from([0, 1, 2, 255, 254]);
    const put = await raw(server, 'PUT', `${T}/artifacts/bin/data.bin`, bytes, {
      'content-type': 'application/x-custom',
    });
    assert.equal(put.status, 201);
    const stat = JSON.parse(put.body.toString()).artifact;
    assert.equal(stat.size_bytes, 5);
    const got = await raw(server, 'GET', `${T}/artifacts/bin/data.bin`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, bytes);
    assert.equal(got.headers['content-type'], 'application/x-custom');
    assert.equal(got.headers.etag, `"${stat.sha256}"`);
    const cached = await raw(server, 'GET', `${T}/artifacts/bin/data.bin`, undefined, {
      'if-none-match': `"${stat.sha256}"`,
    });
    assert.equal(cached.status, 304);
    assert.equal(cached.body.length, 0);
    const replaced = await raw(server, 'PUT', `${T}/artifacts/bin/data.bin`, Buffer.from('x'), {
      'content-type': 'text/plain',
    });
    assert.equal(replaced.status, 200);
    const stale = await raw(server, 'GET', `${T}/artifacts/bin/data.bin`, undefined, {
      'if-none-match': `"${stat.sha256}"`,
    });
    assert.equal(stale.status, 200);
    assert.equal(stale.body.toString(), 'x');
    assert.equal((await raw(server, 'DELETE', `${T}/artifacts/bin/data.bin`)).status, 200);
    const gone = await server.request('GET', `${T}/artifacts/bin/data.bin`);
    assert.equal(gone.status, 404);
    assert.equal(gone.body.error.code, 'ARTIFACT_NOT_FOUND');
  });

  it('lists by prefix with keyset paging', async () => {
    for (const name of ['r/a', 'r/b', 'r/c', 'r/d', 'r/e', 's/a']) {
      await raw(server, 'PUT', `${T}/artifacts/${name}`, Buffer.from(name));
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?prefix=r/&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await server.request('GET', `${T}/artifacts${query}`);
      assert.equal(page.status, 200);
      seen.push(...page.body.items.map((item: { path: string }) => item.path));
      cursor = page.body.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, ['r/a', 'r/b', 'r/c', 'r/d', 'r/e']);
    assert.equal((await server.request('GET', `${T}/artifacts?limit=501`)).status, 400);
  });

  it('rejects traversal and bad paths, writing nothing', async () => {
    const before = await storeSnapshot(server.store);
    const count = async () => (await server.store.listArtifacts('acme', '', 500)).items.length;
    const had = await count();
    for (const path of [
      '../x',
      '%2e%2e/x',
      'a/%2E%2E/b',
      'a//b',
      '%2Fabs',
      'a/./b',
      'a/',
      'a%00b',
      'a%0Ab',
      'a%5C..%5Cb',
    ]) {
      const response = await raw(server, 'PUT', `${T}/artifacts/${path}`, Buffer.from('x'));
      assert.ok([400, 404].includes(response.status), `${path} → ${response.status}`);
      const error = JSON.parse(response.body.toString()).error;
      assert.ok(
        ['VALIDATION_FAILED', 'ROUTE_NOT_FOUND'].includes(error.code),
        `${path}: ${error.code}`,
      );
    }
    assert.equal(await count(), had);
    assert.equal(await storeSnapshot(server.store), before);
  });

  it('refuses a body over limits.artifact_bytes with 413 and writes nothing', async () => {
    const response = await raw(server, 'PUT', `${T}/artifacts/big`, Buffer.alloc(5000, 1));
    assert.equal(response.status, 413);
    assert.equal(JSON.parse(response.body.toString()).error.code, 'PAYLOAD_TOO_LARGE');
    assert.equal(await server.store.getArtifact('acme', 'big'), null);
  });

  it("another tenant's artifact is 404 and its token cannot reach this tenant", async () => {
    await raw(server, 'PUT', `${T}/artifacts/secret`, Buffer.from('s'));
    assert.equal((await server.request('GET', '/v1/tenants/other/artifacts/secret')).status, 404);
    const { token } = await seedTenant(server, 'third');
    const foreign = await server.request('GET', `${T}/artifacts/secret`, { token });
    assert.equal(foreign.status, 403);
  });
});

describe('artifact tools', () => {
  let server: ApiServer;
  let context: ToolContext;
  before(async () => {
    server = await startApiServer();
    await seedTenant(server, 'acme');
    context = toolContext({ store: server.store }, { tenant: 'acme', runId: 'r1' });
  });
  after(() => server.close());

  async function run(tool: AnyToolSpec, input: unknown) {
    const parsed = (tool.input as unknown as { parse(value: unknown): never }).parse(input);
    return (await tool.run(parsed, context)) as Record<string, unknown>;
  }

  it('writes idempotently and reads text back', async () => {
    const first = await run(artifactWriteTool, { path: 'notes/a.md', content: '# hi' });
    const second = await run(artifactWriteTool, { path: 'notes/a.md', content: '# hi' });
    assert.equal(first.sha256, second.sha256);
    assert.equal(second.created, false);
    const read = await run(artifactReadTool, { path: 'artifact://acme/notes/a.md' });
    assert.equal(read.text, '# hi');
    assert.equal(read.inline, true);
  });

  it('returns a reference for binary and for text over 256 KiB', async () => {
    await run(artifactWriteTool, {
      path: 'b.bin',
      content: Buffer.from([0, 1, 2]).toString('base64'),
      encoding: 'base64',
    });
    const binary = await run(artifactReadTool, { path: 'b.bin' });
    assert.equal(binary.inline, false);
    assert.equal(binary.ref, 'artifact://acme/b.bin');
    assert.equal(binary.text, undefined);
    await run(artifactWriteTool, { path: 'big.txt', content: 'x'.repeat(300 * 1024) });
    const big = await run(artifactReadTool, { path: 'big.txt' });
    assert.equal(big.inline, false);
    assert.equal(big.size_bytes, 300 * 1024);
  });

  it('enforces the 1 MiB write limit, path rules, tenancy of refs and the list limit', async () => {
    await assert.rejects(
      run(artifactWriteTool, { path: 'huge', content: 'x'.repeat(1024 * 1024 + 1) }),
      { code: 'ARTIFACT_TOO_LARGE' },
    );
    assert.equal(await server.store.getArtifact('acme', 'huge'), null);
    await assert.rejects(run(artifactWriteTool, { path: '../etc', content: 'x' }), {
      code: 'INVALID_PATH',
    });
    await assert.rejects(run(artifactReadTool, { path: 'artifact://other/notes/a.md' }), {
      code: 'ARTIFACT_NOT_FOUND',
    });
    assert.throws(() =>
      (artifactListTool.input as unknown as { parse(v: unknown): never }).parse({ limit: 101 }),
    );
    await run(artifactWriteTool, { path: 'listed/one.md', content: '1' });
    const listed = await run(artifactListTool, { prefix: 'listed/' });
    assert.deepEqual(
      (listed.items as { path: string }[]).map((item) => item.path),
      ['listed/one.md'],
    );
  });
});
