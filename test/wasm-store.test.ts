// The wasm_tools store methods on both backends: create and replace (created flag,
// updated_at moves, sha256 of the stored bytes), the module read back byte for byte,
// listings without the module, tenant scoping, delete, and a deleted tenant taking its
// tools with it; TENANT_NOT_FOUND for an unknown tenant.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { isKeelError } from '../src/errors.ts';
import { openPostgresStore } from '../src/store/postgres/index.ts';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import type { Store } from '../src/store/store.ts';
import {
  dropSchemas,
  freshSchemaName,
  skipUnlessPostgres,
  urlWithSchema,
} from './helpers/postgres.ts';

const skipPostgres = await skipUnlessPostgres('test/wasm-store.test.ts');
const schema = freshSchemaName('keel_wasm_store');
let dir: string;

after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  if (!skipPostgres) await dropSchemas([schema]);
});

async function checks(store: Store): Promise<void> {
  await store.createTenant('acme', {});
  await store.createTenant('other', {});
  const first = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 255, 0, 7]);
  const second = new Uint8Array(70_000).map((_, index) => index % 251);
  const manifest = { description: 'd', effect: 'read_only', timeout_ms: 100 };

  const created = await store.putWasmTool('acme', 'echo', { manifest, module: first });
  assert.equal(created.created, true);
  assert.equal(created.tool.module_bytes, first.byteLength);
  assert.equal(created.tool.sha256, createHash('sha256').update(first).digest('hex'));
  assert.deepEqual(created.tool.manifest, manifest);

  const replaced = await store.putWasmTool('acme', 'echo', {
    manifest: { ...manifest, timeout_ms: 200 },
    module: second,
  });
  assert.equal(replaced.created, false);
  assert.ok(replaced.tool.updated_at > created.tool.updated_at, 'updated_at moves');
  assert.equal(replaced.tool.created_at, created.tool.created_at);

  const got = await store.getWasmTool('acme', 'echo');
  assert.deepEqual(Buffer.from(got?.module ?? []), Buffer.from(second), 'the module byte for byte');
  assert.equal(got?.manifest.timeout_ms, 200);

  const listed = await store.listWasmTools('acme');
  assert.deepEqual(
    listed.map((tool) => [tool.name, tool.module_bytes, 'module' in tool]),
    [['echo', 70_000, false]],
  );
  assert.deepEqual(await store.listWasmTools('other'), []);
  assert.equal(await store.getWasmTool('other', 'echo'), null);
  assert.equal(await store.deleteWasmTool('other', 'echo'), false);

  await assert.rejects(
    store.putWasmTool('nobody', 'x', { manifest, module: first }),
    (error: unknown) => isKeelError(error, 'TENANT_NOT_FOUND'),
  );

  await store.putWasmTool('other', 'b', { manifest, module: first });
  assert.equal(await store.deleteWasmTool('acme', 'echo'), true);
  assert.equal(await store.getWasmTool('acme', 'echo'), null);
  assert.equal(await store.deleteTenant('other'), true);
  await store.createTenant('other', {});
  assert.deepEqual(await store.listWasmTools('other'), [], 'a deleted tenant took its tools');
}

describe('wasm_tools store', () => {
  it('sqlite', async () => {
    dir = await mkdtemp(join(tmpdir(), 'keel-wasm-store-'));
    const store = await openSqliteStore({ path: join(dir, 'keel.db'), durability: 'process' });
    try {
      await checks(store);
    } finally {
      await store.close();
    }
  });

  it('postgres', { skip: skipPostgres }, async () => {
    const store = await openPostgresStore({ url: urlWithSchema(schema), poolSize: 2 });
    try {
      await checks(store);
    } finally {
      await store.close();
    }
  });
});
