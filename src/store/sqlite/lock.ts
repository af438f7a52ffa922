// One keel process owns a SQLite data dir. The lock is a small SQLite database of its
// own held in EXCLUSIVE locking mode after a write: SQLite keeps fcntl locks on it
// until the connection closes, and the kernel drops them when the process dies, so a
// SIGKILLed owner never leaves a stale lock behind (unlike a pid file).

import Database from 'better-sqlite3';
import type { Database as SqliteDatabase } from 'better-sqlite3';
import { dirname, join } from 'node:path';
import { KeelError } from '../../errors.ts';

export const LOCK_FILE_NAME = 'keel.lock';

export interface DataDirLock {
  readonly path: string;
  release(): void;
}

export function lockPathFor(databasePath: string): string {
  return join(dirname(databasePath), LOCK_FILE_NAME);
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
}

export function acquireDataDirLock(databasePath: string): DataDirLock {
  const lockPath = lockPathFor(databasePath);
  const dir = dirname(lockPath);
  let db: SqliteDatabase | null = null;
  try {
    db = new Database(lockPath, { timeout: 0 });
    db.pragma('locking_mode = EXCLUSIVE');
    // The write takes the EXCLUSIVE lock; in this locking mode commit does not drop it.
    db.exec(
      'BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS owner (pid INTEGER, since INTEGER); COMMIT;',
    );
    db.prepare('DELETE FROM owner').run();
    db.prepare('INSERT INTO owner (pid, since) VALUES (?, ?)').run(process.pid, Date.now());
  } catch (error) {
    db?.close();
    if (isBusy(error)) {
      throw new KeelError(
        'DATA_DIR_LOCKED',
        `another keel process owns the data dir ${dir} (lock file ${lockPath}); stop it, or point this one at another data dir`,
      );
    }
    throw error;
  }
  const held = db;
  let released = false;
  return {
    path: lockPath,
    release(): void {
      if (released) return;
      released = true;
      held.close();
    },
  };
}
