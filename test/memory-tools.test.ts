// The five memory tools through real ports: defaults, idempotent put, limits, cursor
// binding, and the host-enforced rule of the memory-maintainer.

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createHashEmbedder } from '../src/memory/embedders/hash.ts';
import { MaintenanceScans } from '../src/memory/maintenance.ts';
import { createMemoryService } from '../src/memory/service.ts';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import type { Store } from '../src/store/store.ts';
import { builtinTools } from '../src/tools/builtin/index.ts';
import type { AnyToolSpec, ToolContext } from '../src/tools/tool.ts';
import type { JsonValue } from '../src/types.ts';
import { toolContext } from './helpers/tool-context.ts';

let store: Store;
let dir: string;
let scans: MaintenanceScans;
const tools = new Map<string, AnyToolSpec>(builtinTools().map((tool) => [tool.name, tool]));

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'keel-memory-tools-'));
  store = await openSqliteStore({ path: join(dir, 'keel.db'), durability: 'process' });
  await store.createTenant('t1', {});
  await store.createTenant('t2', {});
  scans = new MaintenanceScans();
});
after(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

function contextFor(tenant: string, agent = 'assistant', runId = 'run-1'): ToolContext {
  const service = createMemoryService({ store, embedder: createHashEmbedder() });
  return toolContext({ store, memory: { service, scans } }, { tenant, agent, runId });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function run(name: string, input: unknown, context: ToolContext): Promise<any> {
  const tool = tools.get(name);
  assert.ok(tool, name);
  const parsed = (tool.input as unknown as { parse(value: unknown): never }).parse(input);
  return (await tool.run(parsed, context)) as JsonValue;
}

async function toolError(
  name: string,
  input: unknown,
  context: ToolContext,
): Promise<{ code: string; message: string }> {
  try {
    await run(name, input, context);
  } catch (error) {
    return error as { code: string; message: string };
  }
  throw new Error(`${name} should have failed`);
}

describe('memory tools', () => {
  it('are registered in family "memory" with the spec effects', () => {
    const effects = Object.fromEntries(
      [...tools.values()]
        .filter((tool) => tool.family === 'memory')
        .map((tool) => [tool.name, tool.effect]),
    );
    assert.deepEqual(effects, {
      memory_put: 'idempotent',
      memory_get: 'read_only',
      memory_search: 'read_only',
      memory_list: 'read_only',
      memory_delete: 'idempotent',
    });
  });

  it('put is idempotent with a text-hash id; namespace defaults to "default"', async () => {
    const context = contextFor('t1');
    const first = await run('memory_put', { text: 'I am allergic to peanuts' }, context);
    const second = await run('memory_put', { text: 'I am allergic to peanuts' }, context);
    assert.equal(first.namespace, 'default');
    assert.equal(first.id, second.id);
    assert.equal(first.created, true);
    assert.equal(second.created, false);
    const got = await run('memory_get', { id: first.id }, context);
    assert.equal(got.text, 'I am allergic to peanuts');
    const found = await run('memory_search', { query: 'peanuts allergy' }, context);
    assert.equal(found.results[0].id, first.id);
    assert.equal((await run('memory_delete', { id: first.id }, context)).deleted, true);
    assert.equal((await run('memory_delete', { id: first.id }, context)).deleted, false);
    assert.equal(
      (await toolError('memory_get', { id: first.id }, context)).code,
      'MEMORY_NOT_FOUND',
    );
    // Another tenant never sees it.
    await run('memory_put', { id: 'shared', text: 'tenant one secret' }, context);
    assert.equal(
      (await toolError('memory_get', { id: 'shared' }, contextFor('t2'))).code,
      'MEMORY_NOT_FOUND',
    );
  });

  it('limits: text ≤ 4096 bytes, search limit ≤ 20', async () => {
    const context = contextFor('t1');
    const tool = tools.get('memory_put');
    assert.ok(tool);
    const big = (
      tool.input as unknown as {
        safeParse(v: unknown): { success: boolean; error?: { message: string } };
      }
    ).safeParse({
      text: 'x'.repeat(4097),
    });
    assert.equal(big.success, false);
    assert.match(big.error?.message ?? '', /4096/);
    const search = tools.get('memory_search');
    assert.ok(search);
    const tooMany = (
      search.input as unknown as { safeParse(v: unknown): { success: boolean } }
    ).safeParse({
      query: 'x',
      limit: 21,
    });
    assert.equal(tooMany.success, false);
    assert.ok(await run('memory_search', { query: 'x', limit: 20 }, context));
  });

  it('memory_search takes mode: lexical and semantic each alone, anything else refused', async () => {
    const context = contextFor('t1');
    await run(
      'memory_put',
      { namespace: 'modes', id: 'a', text: 'flight LH1234 boards at B22' },
      context,
    );
    await run(
      'memory_put',
      { namespace: 'modes', id: 'b', text: 'flight BA0117 boards at A7' },
      context,
    );
    const lexical = await run(
      'memory_search',
      { namespace: 'modes', query: 'LH1234', mode: 'lexical' },
      context,
    );
    assert.deepEqual(
      lexical.results.map((hit: { id: string; semantic_rank: null }) => [
        hit.id,
        hit.semantic_rank,
      ]),
      [['a', null]],
    );
    const semantic = await run(
      'memory_search',
      { namespace: 'modes', query: 'LH1234', mode: 'semantic' },
      context,
    );
    assert.equal(semantic.results.length, 2);
    for (const hit of semantic.results) assert.equal(hit.lexical_rank, null);
    const search = tools.get('memory_search');
    assert.ok(search);
    const parsed = (
      search.input as unknown as {
        safeParse(v: unknown): { success: boolean; error?: { issues: { path: string[] }[] } };
      }
    ).safeParse({ query: 'x', mode: 'fuzzy' });
    assert.equal(parsed.success, false);
    assert.deepEqual(parsed.error?.issues[0]?.path, ['mode']);
  });

  it('a list cursor from another namespace or tenant is rejected', async () => {
    const context = contextFor('t1');
    for (const id of ['a', 'b']) {
      await run('memory_put', { namespace: 'n1', id, text: `fact ${id}` }, context);
      await run('memory_put', { namespace: 'n2', id, text: `fact ${id}` }, context);
    }
    const page = await run('memory_list', { namespace: 'n1', limit: 1 }, context);
    assert.ok(page.next_cursor);
    const wrong = await toolError(
      'memory_list',
      { namespace: 'n2', cursor: page.next_cursor },
      context,
    );
    assert.equal(wrong.code, 'INVALID_ARGUMENT');
    assert.match(wrong.message, /another tenant or namespace/);
    const otherTenant = await toolError(
      'memory_list',
      { namespace: 'n1', cursor: page.next_cursor },
      contextFor('t2'),
    );
    assert.equal(otherTenant.code, 'INVALID_ARGUMENT');
  });

  it('the memory-maintainer may change a namespace only after listing it completely in this run', async () => {
    const setup = contextFor('t1');
    for (const id of ['m1', 'm2', 'm3']) {
      await run('memory_put', { namespace: 'maint', id, text: `fact ${id}` }, setup);
    }
    const maintainer = contextFor('t1', 'memory-maintainer', 'run-m');
    const refused = await toolError('memory_delete', { namespace: 'maint', id: 'm1' }, maintainer);
    assert.equal(refused.code, 'MEMORY_SCAN_REQUIRED');
    assert.match(refused.message, /memory_list/);

    // A partial scan is not enough; a scan that skips a page does not count.
    const page1 = await run('memory_list', { namespace: 'maint', limit: 1 }, maintainer);
    assert.equal(
      (await toolError('memory_put', { namespace: 'maint', id: 'm1', text: 'x' }, maintainer)).code,
      'MEMORY_SCAN_REQUIRED',
    );
    const page2 = await run(
      'memory_list',
      { namespace: 'maint', limit: 1, cursor: page1.next_cursor },
      maintainer,
    );
    const page3 = await run(
      'memory_list',
      { namespace: 'maint', limit: 1, cursor: page2.next_cursor },
      maintainer,
    );
    assert.equal(page3.next_cursor, null);

    // Complete for "maint" in this run only: other namespaces and other runs are still refused.
    assert.equal(
      (await run('memory_delete', { namespace: 'maint', id: 'm1' }, maintainer)).deleted,
      true,
    );
    await run('memory_put', { namespace: 'maint', id: 'm2', text: 'merged fact' }, maintainer);
    assert.equal(
      (await toolError('memory_delete', { namespace: 'default', id: 'x' }, maintainer)).code,
      'MEMORY_SCAN_REQUIRED',
    );
    const nextRun = contextFor('t1', 'memory-maintainer', 'run-n');
    assert.equal(
      (await toolError('memory_delete', { namespace: 'maint', id: 'm2' }, nextRun)).code,
      'MEMORY_SCAN_REQUIRED',
    );
    // Other agents are not subject to the rule.
    assert.equal(
      (await run('memory_delete', { namespace: 'maint', id: 'm3' }, setup)).deleted,
      true,
    );
  });

  it('without a memory port the tools answer MEMORY_UNAVAILABLE', async () => {
    const context = { ...contextFor('t1'), ports: { now: () => new Date() } };
    assert.equal((await toolError('memory_get', { id: 'x' }, context)).code, 'MEMORY_UNAVAILABLE');
  });
});

describe('memory_put text rules', () => {
  it('control-character-only text and lone surrogates are tool errors naming text; nothing stored', async () => {
    const context = contextFor('t1', 'assistant', 'run-text');
    const before = JSON.stringify(await run('memory_list', {}, context));
    for (const text of ['\u0007\u0007', 'peanuts \udc00']) {
      const error = await toolError('memory_put', { text }, context);
      assert.equal(error.code, 'INVALID_ARGUMENT', JSON.stringify(error));
      assert.match(error.message, /^text: must/);
    }
    assert.equal(JSON.stringify(await run('memory_list', {}, context)), before, 'nothing stored');
  });
});
