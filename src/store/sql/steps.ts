// The port the shared repositories (../repositories/) are written against. A repository
// is a generator function: it yields each statement as a Step and gets the statement's
// result back, so one body serves both backends. SQLite drives it synchronously inside
// its synchronous write (sqlite/steps.ts: the group commit stays a single synchronous
// turn); PostgreSQL drives it with an await per statement inside its transaction
// (postgres/steps.ts). docs/store.md says why it is not an async query builder.

import type { StoreChange } from '../store.ts';
import type { Dialect } from './dialect.ts';
import type { Query } from './query.ts';

/**
 * One statement for the driver (all rows, the first row, or the count of changed rows),
 * or a call into code written per backend that must run inside the same
 * transaction (Writes.call).
 */
export type Step =
  | { readonly kind: 'rows' | 'each' | 'one' | 'run'; readonly query: Query }
  | { readonly kind: 'call'; readonly work: () => unknown };

/** A repository operation: yields Steps, returns T. Composes with `yield*`. */
export type Op<T> = Generator<Step, T, unknown>;

/** Reads: statements outside a write (PostgreSQL: on the pool; SQLite: the read window). */
export class Reads {
  constructor(readonly dialect: Dialect) {}

  *rows<T>(query: Query): Op<T[]> {
    return (yield { kind: 'rows', query }) as T[];
  }

  /**
   * The rows one at a time, for a read that may be larger than memory wants (a tenant's
   * export): SQLite hands over its statement's iterator, and no other statement may run
   * on the connection until it is done; PostgreSQL (one table at a time on its snapshot's
   * client) all the rows.
   */
  *each<T>(query: Query): Op<Iterable<T>> {
    return (yield { kind: 'each', query }) as Iterable<T>;
  }

  *one<T>(query: Query): Op<T | undefined> {
    return (yield { kind: 'one', query }) as T | undefined;
  }
}

/** A write transaction: its clock reading and the changes announced after its commit. */
export class Writes extends Reads {
  constructor(
    dialect: Dialect,
    /** Milliseconds: the write's reading of the store clock (a step run inside an open
     *  SQLite write without that reading reads the clock when the step starts). */
    readonly now: number,
    readonly changes: StoreChange[],
  ) {
    super(dialect);
  }

  /** Runs an INSERT, UPDATE or DELETE; the number of rows it changed. */
  *run(query: Query): Op<number> {
    return (yield { kind: 'run', query }) as number;
  }

  /**
   * Runs `work` inside this transaction and hands back its result, or throws its error
   * here: for a write written per backend that a shared one nests (a schedule's
   * fire enqueues its run). On SQLite `work` must be synchronous (the write is).
   */
  *call<T>(work: () => T | Promise<T>): Op<T> {
    return (yield { kind: 'call', work }) as T;
  }

  /** Makes this transaction's writes of `key` take turns with others' (Dialect.turnsOn). */
  *takeTurnOn(key: string): Op<void> {
    const lock = this.dialect.turnsOn(key);
    if (lock) yield { kind: 'one', query: lock };
  }
}
