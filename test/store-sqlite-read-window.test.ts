// The SQLite store's read window (src/store/sqlite/read-window.ts): reads outside a
// write share one read transaction until the event loop's next turn; a write, a write
// statement outside a write, a checkpoint and close each end it first.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import type { SqliteStore } from '../src/store/sqlite/index.ts';
import { agentSpec, AGENT, TENANT, turn } from './store-conformance/harness.ts';

describe('sqlite: the read window', () => {
  const dirs: string[] = [];
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  async function open(): Promise<{ store: SqliteStore; path: string }> {
    const dir = mkdtempSync(join(os.tmpdir(), 'keel-read-window-'));
    dirs.push(dir);
    const path = join(dir, 'keel.db');
    // No data-dir lock: the test plays a second writer on the same file.
    const store = await openSqliteStore({ path, durability: 'process', exclusiveLock: false });
    await store.createTenant(TENANT, {});
    await store.putAgent(TENANT, AGENT, agentSpec());
    return { store, path };
  }
  const connection = (store: SqliteStore): Database.Database =>
    (store as unknown as { ctx: { db: Database.Database } }).ctx.db;

  it('shares one read transaction among the reads of one turn of the event loop', async () => {
    const { store, path } = await open();
    try {
      const db = connection(store);
      const { run } = await store.enqueueRun(turn());
      await nextTurn();
      assert.equal(db.inTransaction, false, 'no window before a read');
      assert.equal((await store.getRun(TENANT, run.run_id))?.status, 'queued');
      assert.equal(db.inTransaction, true, 'the read opened a window');
      // Another connection commits while the window is open: the reads of this turn keep
      // the window's snapshot, the next turn's reads see the commit.
      const peer = new Database(path);
      peer.prepare("UPDATE runs SET scope = 'moved' WHERE run_id = ?").run(run.run_id);
      peer.close();
      assert.equal((await store.getRun(TENANT, run.run_id))?.scope, 's1');
      await nextTurn();
      assert.equal(db.inTransaction, false, 'the window closed at the next turn');
      assert.equal((await store.getRun(TENANT, run.run_id))?.scope, 'moved');
    } finally {
      await store.close();
    }
  });

  it('ends the window before a write, which then sees its own reads current', async () => {
    const { store } = await open();
    try {
      const db = connection(store);
      const first = await store.enqueueRun(turn());
      await nextTurn();
      assert.equal((await store.listRuns(TENANT, {}, 10)).items.length, 1);
      assert.equal(db.inTransaction, true);
      // Same turn, batched writes: their group commit runs after the window's own close
      // at the next turn, so this checks that reads and writes interleave correctly; the
      // close before a write made inside a window is the next test's.
      const cancelled = await store.cancelRun(TENANT, first.run.run_id, 'test');
      assert.equal(cancelled?.status, 'cancelled');
      assert.equal((await store.getRun(TENANT, first.run.run_id))?.status, 'cancelled');
      const second = await store.enqueueRun(turn({ scope: 's2' }));
      assert.equal((await store.listRuns(TENANT, {}, 10)).items.length, 2);
      assert.equal((await store.getRun(TENANT, second.run.run_id))?.status, 'queued');
    } finally {
      await store.close();
    }
  });

  it('commits a direct write made in the same turn as a read at once, visible to another connection', async () => {
    const { store, path } = await open();
    try {
      const db = connection(store);
      await nextTurn();
      assert.equal((await store.getTenant(TENANT))?.name, TENANT);
      assert.equal(db.inTransaction, true, 'the read opened a window');
      // Not batched: putAgent writes synchronously inside this turn, window still open.
      await store.putAgent(TENANT, 'second', agentSpec());
      assert.equal(db.inTransaction, false, 'the write ended the window and committed');
      const peer = new Database(path, { readonly: true });
      try {
        const row = peer.prepare('SELECT name FROM agents WHERE name = ?').get('second');
        assert.deepEqual(row, { name: 'second' }, 'committed, not held in a savepoint');
      } finally {
        peer.close();
      }
    } finally {
      await store.close();
    }
  });

  it('checkpoints the WAL with a window open (the full-disk recovery does)', async () => {
    const { store, path } = await open();
    try {
      await store.enqueueRun(turn());
      await nextTurn();
      await store.listRuns(TENANT, {}, 10);
      const db = connection(store);
      assert.equal(db.inTransaction, true);
      assert.ok(statSync(`${path}-wal`).size > 0, 'the WAL holds the writes');
      const guard = (store as unknown as { ctx: { disk: { options: { checkpoint(): void } } } }).ctx
        .disk;
      guard.options.checkpoint();
      assert.equal(db.inTransaction, false, 'the checkpoint ended the window');
      assert.equal(statSync(`${path}-wal`).size, 0, 'the WAL was checkpointed and truncated');
      assert.equal((await store.listRuns(TENANT, {}, 10)).items.length, 1);
    } finally {
      await store.close();
    }
  });
});
