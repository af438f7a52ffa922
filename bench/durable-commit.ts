// Shared by the overhead and turns benches: the machine's raw durable commit (one
// small SQLite transaction, WAL, synchronous FULL or NORMAL — what keel's durability
// modes set), and a store wrapper that counts keel's own commits (write transactions).

import Database from 'better-sqlite3';
import { join } from 'node:path';
import type { Store } from '../src/store/store.ts';
import { nowMs } from './support.ts';

export interface RawCommitter {
  /** One commit; returns its duration in ms. */
  commit(): number;
  close(): void;
}

export function openRawCommitter(dir: string, durability: 'full' | 'process'): RawCommitter {
  const db = new Database(join(dir, `raw-${durability}.db`));
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${durability === 'full' ? 'FULL' : 'NORMAL'}`);
  db.exec('create table if not exists t (id integer primary key, data text not null)');
  const insert = db.prepare('insert into t (data) values (?)');
  const commit = db.transaction((data: string) => insert.run(data));
  const payload = 'x'.repeat(300);
  return {
    commit() {
      const started = nowMs();
      commit(payload);
      return nowMs() - started;
    },
    close: () => db.close(),
  };
}

/** Store methods that run one write transaction each. */
const WRITE_METHODS = [
  'enqueueRun',
  'claimNextRun',
  'heartbeat',
  'appendProgress',
  'finalizeRun',
  'cancelRun',
] as const;

/** Patches the store instance in place so every write transaction is counted. */
export function countCommits(store: Store): { count(): number } {
  let commits = 0;
  const target = store as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const name of WRITE_METHODS) {
    const original = target[name]?.bind(store);
    if (!original) continue;
    target[name] = async (...args: unknown[]) => {
      const result = await original(...args);
      // A claim round that found nothing wrote nothing.
      if (!(name === 'claimNextRun' && result === null)) commits += 1;
      return result;
    };
  }
  return { count: () => commits };
}
