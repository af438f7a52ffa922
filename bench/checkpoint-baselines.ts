// The two contenders keel's append-only checkpoints are measured against, in the same
// process run: a bare SQLite transaction inserting the same rows (the floor), and a
// whole-file JSON snapshot per round (maiden's store: temp + fsync + rename + dir fsync).

import Database from 'better-sqlite3';
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export interface RoundEvents {
  request: string;
  response: string;
  intent: string;
  result: string;
}

export interface RoundWriter {
  /**
   * Persists one round: SQLite in four commits like keel (model.request event, assistant
   * entry, tool.call intent, tool result); the snapshot once per message.
   */
  writeRound(assistant: string, toolResult: string, events: RoundEvents): void;
  close(): void;
}

/** Plain tables, prepared statements, one transaction per commit: nothing but SQLite. */
export function openBareSqlite(dir: string, synchronous: 'FULL' | 'NORMAL'): RoundWriter {
  const db = new Database(join(dir, 'bare.db'));
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  db.exec(`
    create table entries (run_id text not null, seq integer not null, kind text not null, body text not null, ts integer not null, primary key (run_id, seq)) strict, without rowid;
    create table events (run_id text not null, seq integer not null, type text not null, data text not null, ts integer not null, primary key (run_id, seq)) strict, without rowid;
    create table runs (run_id text primary key, steps integer not null, usage text not null, updated_at integer not null) strict;
    insert into runs values ('r', 0, '{}', 0);
  `);
  const insertEntry = db.prepare('insert into entries values (?, ?, ?, ?, ?)');
  const insertEvent = db.prepare('insert into events values (?, ?, ?, ?, ?)');
  const touchRun = db.prepare(
    'update runs set steps = steps + ?, usage = ?, updated_at = ? where run_id = ?',
  );
  let entrySeq = 0;
  let eventSeq = 0;
  const commit = db.transaction(
    (kind: string | null, body: string | null, type: string, data: string, step: number) => {
      const now = Date.now();
      if (kind !== null && body !== null) insertEntry.run('r', ++entrySeq, kind, body, now);
      insertEvent.run('r', ++eventSeq, type, data, now);
      touchRun.run(step, '{"model_calls":1}', now, 'r');
    },
  );
  return {
    writeRound(assistant, toolResult, events) {
      commit.immediate(null, null, 'model.request', events.request, 0);
      commit.immediate('assistant', assistant, 'model.response', events.response, 1);
      commit.immediate(null, null, 'tool.call', events.intent, 0);
      commit.immediate('tool_result', toolResult, 'tool.result', events.result, 0);
    },
    close: () => db.close(),
  };
}

/** The whole conversation rewritten per commit, made durable by fsync + atomic rename. */
export function openSnapshotFile(dir: string, fsync: boolean): RoundWriter {
  const path = join(dir, 'thread.json');
  const temporary = join(dir, 'thread.json.tmp');
  const dirFd = openSync(dir, 'r');
  const messages: unknown[] = [];
  const persist = (): void => {
    const fd = openSync(temporary, 'w');
    writeSync(fd, JSON.stringify({ messages }));
    if (fsync) fsyncSync(fd);
    closeSync(fd);
    renameSync(temporary, path);
    if (fsync) fsyncSync(dirFd);
  };
  return {
    writeRound(assistant, toolResult) {
      // maiden's store keeps messages only (no trace, no intent record): two rewrites of
      // the whole file per round, one per message.
      messages.push(JSON.parse(assistant));
      persist();
      messages.push(JSON.parse(toolResult));
      persist();
    },
    close: () => closeSync(dirFd),
  };
}
