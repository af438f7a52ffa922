// What every repository of the SQLite store shares: the connection, the clock, fault
// points, seeded bugs, and the one way to write (a BEGIN IMMEDIATE transaction whose
// change notifications go out only after it committed).

import type { Database as SqliteDatabase, Statement, Transaction } from 'better-sqlite3';
import type { Failpoints } from '../../failpoints.ts';
import type { ChangeListener, StoreChange } from '../store.ts';

/** Test-only switches that each break one guarantee (spec/reliability.md, family 6). */
export const SEEDED_BUGS = ['no_fencing', 'split_finalize'] as const;
export type SeededBug = (typeof SEEDED_BUGS)[number];

export class StoreContext {
  readonly listeners = new Set<ChangeListener>();
  private readonly statements = new Map<string, Statement>();
  // One transaction wrapper for every write: building a new one per call costs more
  // than the inserts of a checkpoint in synchronous=NORMAL mode.
  private readonly transaction: Transaction<(body: () => unknown) => unknown>;

  constructor(
    readonly db: SqliteDatabase,
    readonly now: () => number,
    readonly failpoints: Failpoints,
    private readonly seededBugs: ReadonlySet<string>,
  ) {
    this.transaction = db.transaction((body: () => unknown) => body());
  }

  /** A prepared statement, compiled once per connection. */
  sql(text: string): Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  hasBug(bug: SeededBug): boolean {
    return this.seededBugs.has(bug);
  }

  /**
   * Runs `body` as one BEGIN IMMEDIATE transaction. Changes it pushes are delivered to
   * listeners after the commit; a rolled-back transaction notifies nobody.
   */
  write<T>(body: (changes: StoreChange[]) => T): T {
    const changes: StoreChange[] = [];
    const result = this.transaction.immediate(() => body(changes)) as T;
    this.notify(changes);
    return result;
  }

  notify(changes: readonly StoreChange[]): void {
    for (const change of changes) {
      for (const listener of [...this.listeners]) {
        try {
          listener(change);
        } catch {
          // A listener's failure is its own; the committed change stands.
        }
      }
    }
  }
}
