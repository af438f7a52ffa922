// Reads outside a write share one read transaction until the event loop's next turn.
//
// A statement that runs on its own (autocommit) opens and closes a read transaction of
// its own: in WAL mode that is a lock and an unlock of the shared-memory index and a
// look at the file's size, system calls that cost 6–7 µs per statement on this kind of
// machine where a row lookup inside a transaction takes about 1 µs (measured: the
// tenant row 8.6 µs alone, 1.5 µs inside a transaction). A turn makes about 20 reads
// outside its writes (authentication, the wait, the loop's look at its run, thread,
// budget and pending steers), so the store opens one deferred transaction at the first
// such read and commits it at the next turn of the event loop, or before the next write.
//
// Why the reads stay current: the window closes before every write of this connection
// and at the next turn of the event loop at the latest. On a data dir this process owns
// (the lock), nothing else writes, so a window's snapshot is the newest state. A peer
// process on the same file (tests only) can commit during a window: reads of this
// connection then see the state at the window's start until the next turn of the event
// loop, even a read issued after the peer's commit was acknowledged.

import type { Database as SqliteDatabase, Statement } from 'better-sqlite3';

export class ReadWindow {
  private open = false;
  private readonly begin: Statement;
  private readonly commit: Statement;
  private readonly closeLater = (): void => this.close();

  constructor(private readonly db: SqliteDatabase) {
    this.begin = db.prepare('BEGIN DEFERRED');
    this.commit = db.prepare('COMMIT');
  }

  /** Before a read outside any write: joins the open window or opens one. */
  enter(): void {
    if (this.open || this.db.inTransaction) return;
    this.begin.run();
    this.open = true;
    setImmediate(this.closeLater);
  }

  /**
   * Ends the window: before a write (which must begin its own transaction), a checkpoint
   * (which cannot run inside one) or closing the connection.
   */
  close(): void {
    if (!this.open) return;
    try {
      if (this.db.open && this.db.inTransaction) this.commit.run();
    } catch (error) {
      // A read transaction left open would turn every later write into a savepoint that
      // never commits: end it whatever it takes.
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw error;
    } finally {
      this.open = false;
    }
  }
}
