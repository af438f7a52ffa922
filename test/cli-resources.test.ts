// The CLI's nouns as a user runs them (child processes against a keel on loopback):
// empty lists say so, aligned tables by default, `--json` is the API's body, get / put /
// rm round-trip through the server, and `runs list` pages with --limit / --cursor, while
// `agents list` and `threads get` follow the cursor and show everything.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { TestKeel } from './helpers/keel-server.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import { KEEL_CLI } from './helpers/keel-cli.ts';

const ROOT = new URL('..', import.meta.url).pathname;
let keel: TestKeel;

function keelCli(
  ...args: string[]
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = {};
    for (const [key, value] of Object.entries(process.env))
      if (!key.startsWith('KEEL_')) env[key] = value;
    const child = spawn(process.execPath, [...KEEL_CLI, ...args], {
      cwd: ROOT,
      env: { ...env, KEEL_URL: keel.url, KEEL_TENANT: 'nouns' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    // 'close', not 'exit': output may still be in the pipe when the process has exited.
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function ok(...args: string[]): Promise<string> {
  const result = await keelCli(...args);
  assert.equal(result.code, 0, `keel ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

before(async () => {
  // The hash embedder: no word-vector cache to build before the first memory call.
  // The smallest list page budget, so a thread of a few hundred KiB needs several pages.
  keel = await startTestKeel({
    toml: '[memory]\nembedder = "hash"\n[tenant_limits]\nlist_page_bytes = 65536\n',
  });
  await ok('tenant', 'create', 'nouns');
});

after(async () => {
  await keel.close();
});

describe('keel nouns', () => {
  it('agents: empty list, put, aligned list, --json, get, rm', async () => {
    assert.equal(await ok('agents', 'list'), 'no agents\n');
    const file = join(keel.dir, 'a.toml');
    await writeFile(file, 'model = "fixture/echo"\n');
    assert.equal(await ok('agents', 'put', 'helper', file), 'agents helper saved\n');
    assert.equal(
      await ok('agents', 'put', 'a-much-longer-name', file),
      'agents a-much-longer-name saved\n',
    );
    const table = (await ok('agents', 'list')).split('\n');
    assert.match(table[0] ?? '', /^NAME {16}MODEL {9}UPDATED$/);
    // Every MODEL cell starts in the same column.
    const column = table[0]?.indexOf('MODEL');
    for (const line of table.slice(1, 3)) assert.equal(line.indexOf('fixture/echo'), column, line);
    const json = JSON.parse(await ok('agents', 'list', '--json')) as { agents: { name: string }[] };
    assert.deepEqual(json.agents.map((agent) => agent.name).sort(), [
      'a-much-longer-name',
      'helper',
    ]);
    assert.equal(JSON.parse(await ok('agents', 'get', 'helper')).model, 'fixture/echo');
    assert.equal(await ok('agents', 'rm', 'helper'), 'agents helper removed\n');
    const missing = await keelCli('agents', 'get', 'helper');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^keel: AGENT_NOT_FOUND: /);
  });

  it('threads, schedules, artifacts, deliveries, approvals: empty lists say so; a turn makes a thread', async () => {
    assert.equal(
      await ok('threads', 'list', 'a-much-longer-name'),
      'no threads for a-much-longer-name\n',
    );
    assert.equal(await ok('schedules', 'list'), 'no schedules\n');
    assert.equal(await ok('artifacts', 'list'), 'no artifacts\n');
    assert.equal(await ok('deliveries', 'list'), 'no deliveries\n');
    // Found on the first-hour walk: an empty approvals list printed nothing at all.
    assert.equal(await ok('approvals', 'list'), 'no approvals waiting\n');
    assert.deepEqual(JSON.parse(await ok('approvals', 'list', '--json')), { approvals: [] });
    await ok('turn', 'a-much-longer-name', 'chat-1', 'hello', '--wait', '--deliver-to', 'test:x');
    assert.match(await ok('threads', 'list', 'a-much-longer-name'), /^chat-1 +1 +\S+$/m);
    const thread = JSON.parse(await ok('threads', 'get', 'a-much-longer-name', 'chat-1'));
    assert.equal(thread.turns, 1);
    assert.match(await ok('deliveries', 'list', '--status', 'pending'), /pending +test:x/);
    assert.equal(
      await ok('threads', 'rm', 'a-much-longer-name', 'chat-1'),
      'threads chat-1 removed\n',
    );
    // Found on the first-hour walk: `schedules put <name> <file.toml>` (as its usage says)
    // was refused with UNSUPPORTED_MEDIA_TYPE — the API takes JSON, so the CLI converts.
    const schedule = join(keel.dir, 'hourly.toml');
    await writeFile(
      schedule,
      'agent = "a-much-longer-name"\nscope = "tick"\nevery_ms = 3600000\n\n[payload]\ntext = "tick"\n',
    );
    assert.equal(await ok('schedules', 'put', 'hourly', schedule), 'schedules hourly saved\n');
    assert.match(
      await ok('schedules', 'list'),
      /^hourly +a-much-longer-name +tick +every 3600000 ms /m,
    );
    assert.deepEqual(JSON.parse(await ok('schedules', 'get', 'hourly')).payload, { text: 'tick' });
    await writeFile(schedule, 'agent = "a-much-longer-name"\nscope = \n');
    const broken = await keelCli('schedules', 'put', 'hourly', schedule);
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /hourly\.toml: invalid TOML at line 2/);
    assert.equal(await ok('schedules', 'rm', 'hourly'), 'schedules hourly removed\n');
    const usage = await keelCli('threads', 'list');
    assert.equal(usage.code, 2, 'threads list needs the agent');
  });

  it('memory: empty list, put, list, get, search with both ranks, rm, bad action', async () => {
    assert.equal(await ok('memory', 'list', 'notes'), 'no memory for notes\n');
    assert.equal(
      await ok('memory', 'put', 'notes', 'dog', 'Sam has a golden retriever called Bo'),
      'memory notes/dog saved\n',
    );
    await ok(
      'memory',
      'put',
      'notes',
      'inv',
      'Invoice 4471 is due on Friday',
      '--metadata',
      '{"k":1}',
    );
    const table = (await ok('memory', 'list', 'notes')).split('\n');
    assert.match(table[0] ?? '', /^ID +TEXT +UPDATED$/);
    assert.equal(table.length, 4, 'header, two facts, trailing newline');
    const fact = JSON.parse(await ok('memory', 'get', 'notes', 'inv'));
    assert.deepEqual([fact.text, fact.metadata], ['Invoice 4471 is due on Friday', { k: 1 }]);
    const hits = (await ok('memory', 'search', 'notes', 'invoice', '4471')).split('\n');
    assert.match(hits[0] ?? '', /^ID +SCORE +LEXICAL +SEMANTIC +TEXT$/);
    assert.match(hits[1] ?? '', /^inv +\S+ +1 +\S+ +Invoice 4471/);
    const lexical = JSON.parse(
      await ok('memory', 'search', 'notes', 'retriever', '--mode', 'lexical', '--json'),
    );
    assert.deepEqual(
      lexical.results.map((hit: { id: string }) => hit.id),
      ['dog'],
    );
    assert.equal(await ok('memory', 'rm', 'notes', 'dog'), 'memory dog removed\n');
    const bad = await keelCli('memory', 'frobnicate', 'notes');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /expected reindex, list, get, put, rm or search/);
  });

  it('artifacts: put a file, list, get to stdout and to --out byte for byte, rm', async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 255, 10, 13]);
    const file = join(keel.dir, 'blob.bin');
    await writeFile(file, bytes);
    assert.equal(
      await ok('artifacts', 'put', 'reports/blob.bin', file),
      'artifacts reports/blob.bin saved (7 bytes, application/octet-stream)\n',
    );
    assert.match(
      await ok('artifacts', 'list'),
      /reports\/blob\.bin +application\/octet-stream +7 /,
    );
    const out = join(keel.dir, 'copy.bin');
    await ok('artifacts', 'get', 'reports/blob.bin', '--out', out);
    assert.deepEqual(await readFile(out), bytes);
    const text = join(keel.dir, 'note.txt');
    await writeFile(text, 'hello artifact');
    await ok('artifacts', 'put', 'note.txt', text);
    assert.equal(await ok('artifacts', 'get', 'note.txt'), 'hello artifact');
    assert.equal(await ok('artifacts', 'rm', 'note.txt'), 'artifacts note.txt removed\n');
    const missing = await keelCli('artifacts', 'get', 'note.txt');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /ARTIFACT_NOT_FOUND/);
  });

  it('runs list pages with --limit and --cursor', async () => {
    for (const scope of ['p1', 'p2', 'p3'])
      await ok('turn', 'a-much-longer-name', scope, 'hi', '--wait');
    const first = await ok('runs', 'list', '--limit', '2');
    const cursor = /\(more: add --cursor (\S+)\)/.exec(first)?.[1];
    assert.ok(cursor, first);
    const firstIds = first
      .split('\n')
      .slice(1, 3)
      .map((line) => line.split(' ')[0]);
    const second = await ok('runs', 'list', '--limit', '2', '--cursor', cursor);
    const secondIds = second
      .split('\n')
      .slice(1)
      .filter((line) => /^\S{36} /.test(line))
      .map((line) => line.split(' ')[0]);
    assert.equal(secondIds.length, 2, second);
    assert.equal(firstIds.filter((id) => secondIds.includes(id)).length, 0, 'pages do not overlap');
    const json = JSON.parse(await ok('runs', 'list', '--json', '--limit', '1')) as {
      runs: unknown[];
      next_cursor: string;
    };
    assert.equal(json.runs.length, 1);
    assert.ok(json.next_cursor);
  });

  it('agents list, secrets list and threads get follow next_cursor and show everything', async () => {
    // 120 agents: more than one page of the agents list (100 by default).
    for (let index = 0; index < 120; index += 1) {
      await keel.store.putAgent('nouns', `bulk-${String(index).padStart(3, '0')}`, {
        model: 'fixture/echo',
      } as never);
    }
    const json = JSON.parse(await ok('agents', 'list', '--json')) as {
      agents: { name: string }[];
      next_cursor: string | null;
    };
    const bulk = json.agents.filter((agent) => agent.name.startsWith('bulk-'));
    assert.equal(bulk.length, 120);
    assert.equal(json.next_cursor, null);
    const table = (await ok('agents', 'list'))
      .split('\n')
      .filter((line) => line.startsWith('bulk-'));
    assert.equal(table.length, 120);
    assert.match(await ok('agents', 'list', '--limit', '3'), /\(more: add --cursor /);
    // `secrets list` (like `mcp list` and `wasm list`) prints every page too.
    for (let index = 0; index < 120; index += 1) {
      await keel.store.putSecret('nouns', `s-${String(index).padStart(3, '0')}`, 'v');
    }
    const secrets = (await ok('secrets', 'list')).split('\n').filter((line) => line !== '');
    assert.equal(secrets.length, 120);
    // A thread of 40 messages of 8 KB: several pages of the route, one thread in the CLI.
    const messages = Array.from({ length: 40 }, (_, index) => ({
      role: index % 2 === 0 ? 'user' : 'assistant',
      content: `${index}:${'m'.repeat(8_000)}`,
      run_id: `run-${Math.floor(index / 2)}`,
      ts: new Date(1_700_000_000_000 + index).toISOString(),
    }));
    const db = new Database(join(keel.dir, 'keel.db'));
    try {
      db.prepare(
        `INSERT INTO threads (tenant, agent, scope, revision, turns, messages, updated_at)
         VALUES ('nouns', 'bulk-000', 'long', 1, 20, ?, ?)`,
      ).run(JSON.stringify(messages), Date.now());
    } finally {
      db.close();
    }
    const first = await fetch(`${keel.url}/v1/tenants/nouns/threads/bulk-000/long`);
    assert.ok(((await first.json()) as { next_cursor: string | null }).next_cursor, 'paged');
    const thread = JSON.parse(await ok('threads', 'get', 'bulk-000', 'long')) as {
      messages: { content: string }[];
    };
    assert.deepEqual(
      thread.messages.map((message) => Number(message.content.split(':')[0])),
      messages.map((_, index) => index),
    );
  });
});
