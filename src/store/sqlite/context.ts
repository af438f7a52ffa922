// What every repository of the SQLite store shares: the connection, the clock, fault
// points, and the one way to write (a BEGIN IMMEDIATE transaction whose
// change notifications and after-commit hooks run only once it committed).
//
// Group commit: hot-path writes (enqueue, claim, heartbeat, checkpoint, finalize, cancel,
// outbox) go through `batched`. Writes issued in the same turn of the event loop run one
// after another inside ONE transaction, each in its own savepoint (a failing write rolls
// back alone), so concurrent runs share one fsync. Every caller is answered only after
// that commit: durability per write is unchanged, only the fsync is shared.

import type { Database as SqliteDatabase, Statement, Transaction } from 'better-sqlite3';
import type { Failpoints } from '../../failpoints.ts';
import { KeelError } from '../../errors.ts';
import { ChangeHub } from '../rules/change-hub.ts';
import type { StoreChange } from '../store.ts';
import { toStoreError } from '../store-errors.ts';
import { FullDiskGuard } from './disk-reserve.ts';
import type { SqliteReadPool } from './read-pool.ts';
import { ReadWindow } from './read-window.ts';

/** What a write (or a batch) leaves for after the outermost commit. */
interface CommitFrame {
  changes: StoreChange[];
  hooks: (() => void)[];
}

interface QueuedWrite {
  operation: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class StoreContext {
  /** This process's listeners; they hear only committed changes. */
  readonly hub = new ChangeHub();
  // Open writes, innermost last: nested writes are savepoints of the outermost one.
  private readonly frames: CommitFrame[] = [];
  private readonly queue: QueuedWrite[] = [];
  private flushScheduled = false;
  private readonly statements = new Map<string, Statement>();
  // One transaction wrapper for every write: building a new one per call costs more
  // than the inserts of a checkpoint in synchronous=NORMAL mode.
  private readonly transaction: Transaction<(body: () => unknown) => unknown>;
  // The last clock reading written as text: the writes of one millisecond (a group
  // commit's, a run's checkpoints) share it instead of formatting a Date each.

  constructor(
    readonly db: SqliteDatabase,
    readonly now: () => number,
    readonly failpoints: Failpoints,
    /** Threads for long reads (memory's vector scan); null: they run on this connection. */
    readonly readPool: SqliteReadPool | null = null,
    /** Full-disk handling (disk-reserve.ts); the default keeps no reserve file. */
    readonly disk: FullDiskGuard = new FullDiskGuard({
      reservePath: null,
      checkpoint: () => undefined,
      freePagesBytes: () => 0,
      walCheckpointBytes: () => undefined,
    }),
    /** The read transaction that reads outside a write share (read-window.ts). */
    readonly reads: ReadWindow = new ReadWindow(db),
  ) {
    this.transaction = db.transaction((body: () => unknown) => body());
  }

  /**
   * A prepared statement, compiled once per connection. Outside a write, a read joins
   * the read window and anything else runs after it closed (read-window.ts).
   */
  sql(text: string): Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    if (this.frames.length === 0) {
      if (statement.readonly) this.reads.enter();
      else this.reads.close();
    }
    return statement;
  }

  /**
   * Runs `body` as one BEGIN IMMEDIATE transaction (a savepoint when another write or a
   * batch is open). Changes it pushes reach listeners after the outermost commit; a
   * rolled-back write notifies nobody.
   */
  write<T>(body: (changes: StoreChange[]) => T): T {
    if (this.frames.length === 0) this.beginOwnTransaction();
    this.disk.admit();
    const frame: CommitFrame = { changes: [], hooks: [] };
    this.frames.push(frame);
    let result: T;
    try {
      result = this.transaction.immediate(() => body(frame.changes)) as T;
    } catch (error) {
      // A full disk answers STORE_UNAVAILABLE (and releases the reserve for deletes).
      this.disk.failed(error);
      throw toStoreError(error);
    } finally {
      this.frames.pop();
    }
    this.settle(frame);
    if (this.frames.length === 0) this.disk.committed();
    return result;
  }

  /**
   * Before an outermost write: no read window may stay open. better-sqlite3 would not
   * refuse — it nests the write as a savepoint of the open transaction, committed only
   * with it — so this is checked, not assumed.
   */
  private beginOwnTransaction(): void {
    this.reads.close();
    if (this.db.inTransaction)
      throw new KeelError('INTERNAL', 'a write began inside an open read transaction');
  }

  /** Runs `hook` once the enclosing write or batch committed (now, when none is open). */
  afterCommit(hook: () => void): void {
    const open = this.frames[this.frames.length - 1];
    if (open) open.hooks.push(hook);
    else hook();
  }

  /** Queues `operation` for the next group commit; settles after that commit. */
  batched<T>(operation: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ operation, resolve: resolve as (value: unknown) => void, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Runs every queued write now (also used before the connection closes). */
  flush(): void {
    this.flushScheduled = false;
    const writes = this.queue.splice(0);
    if (writes.length === 0) return;
    try {
      this.beginOwnTransaction();
    } catch (error) {
      for (const write of writes) write.reject(error);
      return;
    }
    if (writes.length === 1) {
      const only = writes[0] as QueuedWrite;
      try {
        only.resolve(only.operation());
      } catch (error) {
        only.reject(error);
      }
      return;
    }
    // One frame per write, so each write's notifications and after-commit hooks (fault
    // points among them) stay its own once the shared transaction has committed.
    const outcomes: { frame: CommitFrame; ok: boolean; value?: unknown; error?: unknown }[] = [];
    try {
      this.transaction.immediate(() => {
        for (const write of writes) {
          const frame: CommitFrame = { changes: [], hooks: [] };
          this.frames.push(frame);
          try {
            // The operation's own write is a savepoint: its failure undoes only itself.
            outcomes.push({ frame, ok: true, value: write.operation() });
          } catch (error) {
            outcomes.push({ frame, ok: false, error });
          } finally {
            this.frames.pop();
          }
        }
      });
    } catch (error) {
      this.disk.failed(error);
      const mapped = toStoreError(error);
      for (const write of writes) write.reject(mapped);
      return;
    }
    writes.forEach((write, index) => {
      const outcome = outcomes[index] as (typeof outcomes)[number];
      try {
        this.settle(outcome.frame);
      } catch (error) {
        // A throwing after-commit hook (a fault point) fails its own write only.
        write.reject(error);
        return;
      }
      if (outcome.ok) write.resolve(outcome.value);
      else write.reject(outcome.error);
    });
  }

  private settle(frame: CommitFrame): void {
    const parent = this.frames[this.frames.length - 1];
    if (parent) {
      parent.changes.push(...frame.changes);
      parent.hooks.push(...frame.hooks);
      return;
    }
    this.notify(frame.changes);
    for (const hook of frame.hooks) hook();
  }

  notify(changes: readonly StoreChange[]): void {
    this.hub.notify(changes);
  }
}
