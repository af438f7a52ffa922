// Lists that used to come back whole (issue: "unpaged list responses can grow the process
// by gigabytes"): the agents list, the memory list and one thread's messages come in
// pages cut at tenant_limits.list_page_bytes, and following next_cursor yields every
// item exactly once; so do secrets, MCP servers, WebAssembly tools and webhooks; an
// agent create past tenant_limits.agents is 403 QUOTA_EXCEEDED and writes nothing.

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pino from 'pino';
import { buildApi } from '../src/api/app.ts';
import type { KeelConfig, TenantLimits } from '../src/config.ts';
import { loadConfig } from '../src/config.ts';
import { createHashEmbedder } from '../src/memory/embedders/hash.ts';
import { createMemoryService } from '../src/memory/service.ts';
import { createMetrics } from '../src/metrics.ts';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import type { ApiServer } from './helpers/api-server.ts';
import { seedTenant, startApiServer, storeSnapshot } from './helpers/api-server.ts';
import type { TestKeel } from './helpers/keel-server.ts';
import { startTestKeel } from './helpers/keel-server.ts';

/** The smallest budget the config accepts: a few KiB items fill it quickly. */
const PAGE_BYTES = 65_536;

function tenantLimits(overrides: Partial<TenantLimits>): TenantLimits {
  const defaults = loadConfig({ data_dir: tmpdir(), listen: '127.0.0.1:0' }, {}, tmpdir());
  return { ...defaults.tenant_limits, ...overrides };
}

/** Follows next_cursor from the first page; returns every page's items and its JSON size. */
async function allPages<T>(
  fetchPage: (cursor: string | undefined) => Promise<{ items: T[]; bytes: number; next: unknown }>,
): Promise<{ items: T[]; pages: number; largestBytes: number }> {
  const items: T[] = [];
  let cursor: string | undefined;
  let pages = 0;
  let largestBytes = 0;
  do {
    const page = await fetchPage(cursor);
    pages += 1;
    largestBytes = Math.max(largestBytes, page.bytes);
    items.push(...page.items);
    cursor = typeof page.next === 'string' ? page.next : undefined;
    assert.ok(pages < 1000, 'the pages end');
  } while (cursor !== undefined);
  return { items, pages, largestBytes };
}

describe('agents: a paged list and a per-tenant quota', () => {
  let server: ApiServer;
  const T = '/v1/tenants/acme';
  const QUOTA = 40;
  before(async () => {
    server = await startApiServer({
      config: { tenant_limits: tenantLimits({ list_page_bytes: PAGE_BYTES, agents: QUOTA }) },
    });
    await seedTenant(server, 'acme', 'a-000');
    await seedTenant(server, 'other', 'a-000');
  });
  after(() => server.close());

  it('the agents list comes in pages within the byte budget and misses none', async () => {
    const persona = 'p'.repeat(8_000);
    for (let index = 1; index < QUOTA; index += 1) {
      const name = `a-${String(index).padStart(3, '0')}`;
      const put = await server.request('PUT', `${T}/agents/${name}`, {
        body: { model: 'fixture/echo', persona },
      });
      assert.equal(put.status, 201, put.text);
    }
    const listed = await allPages(async (cursor) => {
      const query = cursor ? `?cursor=${cursor}` : '';
      const response = await server.request('GET', `${T}/agents${query}`);
      assert.equal(response.status, 200, response.text);
      return {
        items: response.body.agents as { name: string }[],
        bytes: response.text.length,
        next: response.body.next_cursor,
      };
    });
    console.log(
      `agents list: ${listed.items.length} agents (${QUOTA} × ~8 KB) in ${listed.pages} pages, largest ${listed.largestBytes} bytes (budget ${PAGE_BYTES})`,
    );
    assert.ok(listed.pages > 1, 'more than one page');
    assert.ok(listed.largestBytes < PAGE_BYTES + 10_000, 'a page stays near the budget');
    const names = listed.items.map((agent) => agent.name);
    assert.equal(names.length, QUOTA);
    assert.deepEqual(names, [...names].sort(), 'by name');
    assert.equal(new Set(names).size, QUOTA, 'none twice');
    const limited = await server.request('GET', `${T}/agents?limit=5`);
    assert.equal(limited.body.agents.length, 5);
    assert.equal(typeof limited.body.next_cursor, 'string');
    const bad = await server.request('GET', `${T}/agents?cursor=not-a-cursor`);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'VALIDATION_FAILED');
  });

  it('an agent create past tenant_limits.agents is 403 QUOTA_EXCEEDED and writes nothing', async () => {
    const before = await storeSnapshot(server.store);
    const refused = await server.request('PUT', `${T}/agents/one-too-many`, {
      body: { model: 'fixture/echo' },
    });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.error.code, 'QUOTA_EXCEEDED');
    assert.match(refused.body.error.message, /tenant_limits\.agents/);
    assert.equal(await storeSnapshot(server.store), before);
    assert.equal(await server.store.getAgent('acme', 'one-too-many'), null);
    // A replace is no create; another tenant has its own quota; a delete frees a place.
    const replaced = await server.request('PUT', `${T}/agents/a-001`, {
      body: { model: 'fixture/echo', persona: 'shorter' },
    });
    assert.equal(replaced.status, 200, replaced.text);
    const elsewhere = await server.request('PUT', '/v1/tenants/other/agents/b', {
      body: { model: 'fixture/echo' },
    });
    assert.equal(elsewhere.status, 201, elsewhere.text);
    assert.equal((await server.request('DELETE', `${T}/agents/a-002`)).status, 200);
    const after = await server.request('PUT', `${T}/agents/one-too-many`, {
      body: { model: 'fixture/echo' },
    });
    assert.equal(after.status, 201, after.text);
  });

  it('the memory-maintenance preset cannot create its agent past the quota either', async () => {
    const before = await storeSnapshot(server.store);
    const refused = await server.request('POST', `${T}/presets/memory-maintenance`, {
      body: { model: 'fixture/echo' },
    });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.error.code, 'QUOTA_EXCEEDED');
    assert.equal(await storeSnapshot(server.store), before);
    assert.equal((await server.store.listSchedules('acme', {}, 10)).items.length, 0);
  });

  it('the OpenAI model list still names every agent', async () => {
    const models = await server.request('GET', `${T}/openai/models`);
    assert.equal(models.status, 200, models.text);
    assert.equal(models.body.data.length, QUOTA);
  });
});

describe('one thread: its messages in pages', () => {
  let server: ApiServer;
  const T = '/v1/tenants/acme';
  const MESSAGES = 40;
  before(async () => {
    server = await startApiServer({
      config: { tenant_limits: tenantLimits({ list_page_bytes: PAGE_BYTES }) },
    });
    await seedTenant(server, 'acme');
    // A thread as 20 finished turns of 8 KB each way leave it (only the finalization
    // transaction writes threads; the route reads what is stored).
    const messages = Array.from({ length: MESSAGES }, (_, index) => ({
      role: index % 2 === 0 ? 'user' : 'assistant',
      content: `${index}:${'m'.repeat(8_000)}`,
      run_id: `run-${Math.floor(index / 2)}`,
      ts: new Date(1_700_000_000_000 + index).toISOString(),
    }));
    const db = new Database(join(server.dir, 'keel.db'));
    try {
      db.prepare(
        `INSERT INTO threads (tenant, agent, scope, revision, turns, messages, updated_at)
         VALUES ('acme', 'assistant', 'chat', 7, 20, ?, ?)`,
      ).run(JSON.stringify(messages), Date.now());
    } finally {
      db.close();
    }
  });
  after(() => server.close());

  it('comes back in pages within the byte budget, every message once, in order', async () => {
    const read = await allPages(async (cursor) => {
      const query = cursor ? `?cursor=${cursor}` : '';
      const response = await server.request('GET', `${T}/threads/assistant/chat${query}`);
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.revision, 7);
      assert.equal(response.body.turns, 20);
      return {
        items: response.body.messages as { content: string }[],
        bytes: response.text.length,
        next: response.body.next_cursor,
      };
    });
    console.log(
      `thread: ${read.items.length} messages of ~8 KB in ${read.pages} pages, largest ${read.largestBytes} bytes (budget ${PAGE_BYTES})`,
    );
    assert.ok(read.pages > 1, 'more than one page');
    assert.ok(read.largestBytes < PAGE_BYTES + 10_000, 'a page stays near the budget');
    assert.deepEqual(
      read.items.map((message) => Number(message.content.split(':')[0])),
      Array.from({ length: MESSAGES }, (_, index) => index),
    );
  });

  it('a cursor from an older revision is 409 CONFLICT; a bad one 400', async () => {
    const first = await server.request('GET', `${T}/threads/assistant/chat?limit=2`);
    const cursor = first.body.next_cursor as string;
    const db = new Database(join(server.dir, 'keel.db'));
    try {
      db.prepare("UPDATE threads SET revision = 8 WHERE scope = 'chat'").run();
    } finally {
      db.close();
    }
    const stale = await server.request('GET', `${T}/threads/assistant/chat?cursor=${cursor}`);
    assert.equal(stale.status, 409, stale.text);
    assert.equal(stale.body.error.code, 'CONFLICT');
    const bad = await server.request('GET', `${T}/threads/assistant/chat?cursor=xyz`);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'VALIDATION_FAILED');
  });
});

describe('memory list: the page byte budget', () => {
  let dir: string;
  let close: () => Promise<void>;
  // Tests read response bodies loosely; `any` keeps assertions short and is test-only.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let call: (url: string) => Promise<{ status: number; text: string; body: any }>;
  const FACTS = 60;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'keel-memory-pages-'));
    const loaded = loadConfig({ data_dir: dir, listen: '127.0.0.1:0' }, {}, dir);
    const config: KeelConfig = {
      ...loaded,
      tenant_limits: { ...loaded.tenant_limits, list_page_bytes: PAGE_BYTES },
    };
    const store = await openSqliteStore({ path: join(dir, 'keel.db'), durability: 'process' });
    const memory = createMemoryService({ store, embedder: createHashEmbedder() });
    const app = await buildApi({
      config,
      store,
      logger: pino({ level: 'silent' }),
      metrics: createMetrics(),
      memory,
    });
    await store.createTenant('acme', {});
    for (let index = 0; index < FACTS; index += 1) {
      const id = `f-${String(index).padStart(3, '0')}`;
      await memory.put('acme', 'notes', id, `${id} ${'word '.repeat(800)}`, {});
    }
    call = async (url) => {
      const response = await app.inject({ method: 'GET', url, headers: { host: '127.0.0.1' } });
      return { status: response.statusCode, text: response.body, body: response.json() };
    };
    close = async () => {
      await app.close();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    };
  });
  after(() => close());

  it('a page stops at list_page_bytes; following next_cursor yields every fact once', async () => {
    const listed = await allPages(async (cursor) => {
      const query = `?limit=200${cursor ? `&cursor=${cursor}` : ''}`;
      const response = await call(`/v1/tenants/acme/memory/notes${query}`);
      assert.equal(response.status, 200, response.text);
      return {
        items: response.body.items as { id: string }[],
        bytes: response.text.length,
        next: response.body.next_cursor,
      };
    });
    console.log(
      `memory list: ${listed.items.length} facts of ~4 KB at limit=200 in ${listed.pages} pages, largest ${listed.largestBytes} bytes (budget ${PAGE_BYTES})`,
    );
    assert.ok(listed.pages > 1, 'more than one page');
    assert.ok(listed.largestBytes < PAGE_BYTES + 10_000, 'a page stays near the budget');
    assert.deepEqual(
      listed.items.map((fact) => fact.id),
      Array.from({ length: FACTS }, (_, index) => `f-${String(index).padStart(3, '0')}`),
    );
  });
});

describe('secrets, MCP servers, WebAssembly tools and webhooks: paged by name', () => {
  let keel: TestKeel;
  const names = ['c', 'a', 'e', 'b', 'd'];
  before(async () => {
    keel = await startTestKeel({ toml: '[memory]\nembedder = "hash"\n' });
    await keel.store.createTenant('acme', {});
    for (const name of names) {
      await keel.store.putSecret('acme', name, `value-${name}`);
      await keel.store.putMcpServer('acme', name, {
        spec: { enabled: false, transport: { type: 'http', url: 'https://mcp.example/' } },
        tools: [],
        last_error: null,
      });
      await keel.store.putWasmTool('acme', name, {
        manifest: {
          description: name,
          input_schema: { type: 'object' },
          effect: 'read',
          timeout_ms: 1000,
          memory_limit_mb: 16,
          max_output_bytes: 1024,
        },
        module: new Uint8Array(16),
      });
      await keel.store.putWebhook('acme', name, `https://hooks.example/${name}`, `whsec_${name}`);
    }
  });
  after(() => keel.close());

  for (const [route, key] of [
    ['secrets', 'secrets'],
    ['mcp', 'servers'],
    ['wasm-tools', 'tools'],
    ['webhooks', 'webhooks'],
  ] as const) {
    it(`GET T/${route} pages with limit and cursor; without them the first page has all`, async () => {
      const get = async (query: string) => {
        const response = await fetch(`${keel.url}/v1/tenants/acme/${route}${query}`);
        assert.equal(response.status, 200, route);
        return (await response.json()) as Record<string, unknown>;
      };
      const listed = await allPages(async (cursor) => {
        const body = await get(`?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        const items = body[key] as { name: string }[];
        assert.ok(items.length <= 2);
        return { items, bytes: 0, next: body.next_cursor };
      });
      assert.equal(listed.pages, 3);
      assert.deepEqual(
        listed.items.map((item) => item.name),
        ['a', 'b', 'c', 'd', 'e'],
      );
      const whole = await get('');
      assert.equal((whole[key] as unknown[]).length, 5);
      assert.equal(whole.next_cursor, null);
    });
  }
});

describe("a run's entries: in pages", () => {
  let keel: TestKeel;
  before(async () => {
    keel = await startTestKeel({
      toml: `[memory]\nembedder = "hash"\n[tenant_limits]\nlist_page_bytes = ${PAGE_BYTES}\n`,
    });
    await keel.store.createTenant('acme', {});
    const agent = await fetch(`${keel.url}/v1/tenants/acme/agents/echo`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fixture/echo' }),
    });
    assert.equal(agent.status, 201);
  });
  after(() => keel.close());

  it('come back within the byte budget, every entry once, in order', async () => {
    // The input (40 KB) and its echo make two entries that do not fit one page together.
    const text = `hello ${'x'.repeat(40_000)}`;
    const turn = await fetch(`${keel.url}/v1/tenants/acme/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'echo', scope: 's', payload: { text } }),
    });
    assert.equal(turn.status, 202, await turn.clone().text());
    const { run_id: runId } = (await turn.json()) as { run_id: string };
    const done = await fetch(`${keel.url}/v1/tenants/acme/runs/${runId}/wait?timeout_ms=30000`);
    const finished = (await done.json()) as { run: { status: string; error?: unknown } };
    assert.equal(finished.run.status, 'succeeded', JSON.stringify(finished.run.error));
    const stored = await keel.store.loadEntries(runId);
    const read = await allPages(async (cursor) => {
      const response = await fetch(
        `${keel.url}/v1/tenants/acme/runs/${runId}/entries?after=${cursor ?? 0}`,
      );
      assert.equal(response.status, 200);
      const body = await response.text();
      const page = JSON.parse(body) as { entries: { seq: number }[]; next_after: number | null };
      return {
        items: page.entries,
        bytes: body.length,
        next: typeof page.next_after === 'number' ? String(page.next_after) : undefined,
      };
    });
    console.log(
      `run entries: ${read.items.length} entries in ${read.pages} pages, largest ${read.largestBytes} bytes (budget ${PAGE_BYTES})`,
    );
    assert.ok(read.pages > 1, 'more than one page');
    assert.deepEqual(
      read.items.map((entry) => entry.seq),
      stored.map((entry) => entry.seq),
    );
  });
});

describe("a run's entries: each page reads only its own rows", () => {
  let server: ApiServer;
  const ENTRIES = 200;
  const PAGE = 10;
  let runId: string;
  before(async () => {
    server = await startApiServer();
    await seedTenant(server, 'acme');
    const turn = await server.request('POST', '/v1/tenants/acme/turns', {
      body: { agent: 'assistant', scope: 's', payload: { text: 'hi' } },
    });
    assert.equal(turn.status, 202, turn.text);
    runId = turn.body.run_id;
    const claimed = await server.store.claimNextRun({ owner: 'test', lease_ms: 30_000 });
    assert.equal(claimed?.run.run_id, runId);
    await server.store.appendProgress(
      { run_id: runId, attempt: claimed.run.attempt },
      {
        entries: Array.from({ length: ENTRIES }, (_, index) => ({
          kind: 'user' as const,
          body: { text: `m${index}`, payload: { text: `m${index}` } },
        })),
      },
    );
  });
  after(() => server.close());

  it('paging through a run reads each entry from the store about once, not once a page', async () => {
    // Counts the entries the store hands to the route, by either read.
    let read = 0;
    const { store } = server;
    const loadEntries = store.loadEntries.bind(store);
    const getEntriesPage = store.getEntriesPage.bind(store);
    store.loadEntries = async (id) => {
      const entries = await loadEntries(id);
      read += entries.length;
      return entries;
    };
    store.getEntriesPage = async (...args) => {
      const page = await getEntriesPage(...args);
      read += page?.items.length ?? 0;
      return page;
    };
    const seqs: number[] = [];
    let after = 0;
    let pages = 0;
    for (;;) {
      const page = await server.request(
        'GET',
        `/v1/tenants/acme/runs/${runId}/entries?after=${after}&limit=${PAGE}`,
      );
      assert.equal(page.status, 200, page.text);
      pages += 1;
      seqs.push(...(page.body.entries as { seq: number }[]).map((entry) => entry.seq));
      if (page.body.next_after === null) break;
      after = page.body.next_after as number;
    }
    console.log(
      `run entries: ${seqs.length} entries in ${pages} pages of ${PAGE}; entries read from the store: ${read}`,
    );
    assert.deepEqual(
      seqs,
      Array.from({ length: ENTRIES }, (_, index) => index + 1),
    );
    // Before: every page loaded the whole run (pages × entries = 4000 here).
    assert.ok(read <= ENTRIES, `read ${read} entries for ${ENTRIES}`);
    const missing = await server.request('GET', `/v1/tenants/other/runs/${runId}/entries`);
    assert.equal(missing.status, 404);
  });
});
