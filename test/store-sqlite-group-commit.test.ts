// Group commit in the SQLite store: hot-path writes issued in the same event-loop turn
// share one transaction (one fsync), yet each succeeds or fails on its own and is
// answered only after the shared commit.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { isKeelError } from '../src/errors.ts';
import type { Failpoints } from '../src/failpoints.ts';
import {
  AGENT,
  agentSpec,
  fenceOf,
  LEASE_MS,
  succeeded,
  TENANT,
  turn,
} from './store-conformance/harness.ts';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import type { ClaimedRun, Store } from '../src/store/store.ts';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function openSeeded(failpoints?: Failpoints): Promise<{ store: Store; path: string }> {
  const dir = mkdtempSync(join(os.tmpdir(), 'keel-group-commit-'));
  dirs.push(dir);
  const path = join(dir, 'keel.db');
  const store = await openSqliteStore({
    path,
    durability: 'full',
    ...(failpoints && { failpoints }),
  });
  await store.createTenant(TENANT, {});
  await store.putAgent(TENANT, AGENT, agentSpec());
  return { store, path };
}

async function claimAll(store: Store, count: number): Promise<ClaimedRun[]> {
  const claimed = await Promise.all(
    Array.from({ length: count }, () => store.claimNextRun({ owner: 'w', lease_ms: LEASE_MS })),
  );
  return claimed.filter((run): run is ClaimedRun => run !== null);
}

describe('sqlite group commit', () => {
  it('writes of one turn share a transaction: none is visible to another connection before the shared commit', async () => {
    let peer: Database.Database | null = null;
    const seenByPeer: string[] = [];
    let firstRunId = '';
    const failpoints: Failpoints = {
      hit(name) {
        // Runs inside the shared transaction, just before each finalize would commit.
        if (name !== 'finalize.before_commit' || !peer) return;
        const row = peer.prepare('SELECT status FROM runs WHERE run_id = ?').get(firstRunId) as
          { status: string } | undefined;
        seenByPeer.push(row?.status ?? 'missing');
      },
    };
    const { store, path } = await openSeeded(failpoints);
    await Promise.all(
      Array.from({ length: 5 }, (_, index) => store.enqueueRun(turn({ scope: `s${index}` }))),
    );
    const claimed = await claimAll(store, 5);
    assert.equal(claimed.length, 5, 'five claims in one turn, one per lane');
    firstRunId = (claimed[0] as ClaimedRun).run.run_id;
    peer = new Database(path, { readonly: true });
    try {
      const finals = await Promise.all(
        claimed.map((run) => store.finalizeRun(fenceOf(run), succeeded('ok'))),
      );
      assert.deepEqual(
        finals.map((run) => run.status),
        ['succeeded', 'succeeded', 'succeeded', 'succeeded', 'succeeded'],
      );
      // The first finalize had already run when the later ones hit the fault point, yet
      // the peer still saw the run as running: they were one uncommitted transaction.
      assert.equal(seenByPeer.length, 5);
      assert.ok(
        seenByPeer.every((status) => status === 'running'),
        `peer saw ${seenByPeer.join(',')}`,
      );
      const committed = peer
        .prepare('SELECT status FROM runs WHERE run_id = ?')
        .get(firstRunId) as {
        status: string;
      };
      assert.equal(committed.status, 'succeeded');
    } finally {
      peer.close();
      await store.close();
    }
  });

  it('a failing write in a shared commit fails alone; the others commit', async () => {
    const { store } = await openSeeded();
    await Promise.all(
      Array.from({ length: 4 }, (_, index) => store.enqueueRun(turn({ scope: `s${index}` }))),
    );
    const claimed = await claimAll(store, 4);
    assert.equal(claimed.length, 4);
    const stale = { ...fenceOf(claimed[1] as ClaimedRun), attempt: 99 };
    const outcomes = await Promise.allSettled([
      store.appendProgress(fenceOf(claimed[0] as ClaimedRun), {
        entries: [{ kind: 'note', body: { text: 'a' } }],
      }),
      store.appendProgress(stale, { entries: [{ kind: 'note', body: { text: 'stale' } }] }),
      store.appendProgress(fenceOf(claimed[2] as ClaimedRun), {
        entries: [{ kind: 'note', body: { text: 'c' } }],
      }),
      store.finalizeRun(fenceOf(claimed[3] as ClaimedRun), succeeded('done')),
    ]);
    assert.deepEqual(
      outcomes.map((outcome) => outcome.status),
      ['fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
    );
    const rejected = outcomes[1] as PromiseRejectedResult;
    assert.ok(isKeelError(rejected.reason, 'LEASE_LOST'));
    assert.deepEqual(
      (await store.loadEntries((claimed[0] as ClaimedRun).run.run_id)).map((entry) => entry.kind),
      ['note'],
    );
    assert.deepEqual(await store.loadEntries((claimed[1] as ClaimedRun).run.run_id), []);
    assert.equal(
      (await store.getRun(TENANT, (claimed[3] as ClaimedRun).run.run_id))?.status,
      'succeeded',
    );
    await store.close();
  });

  it('a throwing after-commit fault point fails its own write after the commit, not its neighbours', async () => {
    let hits = 0;
    const failpoints: Failpoints = {
      hit(name) {
        if (name === 'entry.after_commit' && ++hits === 2)
          throw new Error('failpoint entry.after_commit');
      },
    };
    const { store } = await openSeeded(failpoints);
    await Promise.all(
      Array.from({ length: 3 }, (_, index) => store.enqueueRun(turn({ scope: `s${index}` }))),
    );
    const claimed = await claimAll(store, 3);
    const outcomes = await Promise.allSettled(
      claimed.map((run, index) =>
        store.appendProgress(fenceOf(run), {
          entries: [{ kind: 'note', body: { text: `n${index}` } }],
        }),
      ),
    );
    assert.deepEqual(
      outcomes.map((outcome) => outcome.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    // "after commit" means the entry of the failed call is durable all the same.
    for (const run of claimed) {
      assert.equal((await store.loadEntries(run.run.run_id)).length, 1);
    }
    await store.close();
  });

  it('close() commits writes still queued for the next group commit', async () => {
    const { store, path } = await openSeeded();
    const pending = store.enqueueRun(turn({ scope: 'late', request_id: 'late-1' }));
    await store.close();
    const result = await pending;
    const reopened = await openSqliteStore({ path, durability: 'full' });
    assert.equal((await reopened.getRun(TENANT, result.run.run_id))?.status, 'queued');
    await reopened.close();
  });
});
