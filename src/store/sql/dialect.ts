// What the shared repositories (../repositories/) leave to the backend: how a
// placeholder is written and the few statements whose SQL differs between SQLite and
// PostgreSQL. Each backend implements it once (sqlite/dialect.ts, postgres/dialect.ts).

import type { Query, SqlValue } from './query.ts';

export interface Dialect {
  /** The statement text with this backend's placeholders. */
  text(query: Query): string;
  /** A value as this backend binds it (SQLite binds no booleans). */
  value(value: SqlValue): unknown;
  /** The larger of two values: MAX(a, b) on SQLite, GREATEST(a, b) on PostgreSQL. */
  greatest(a: Query, b: Query): Query;
  /**
   * Appended to a SELECT inside a write whose row must stay until the commit (the
   * tenant a write belongs to). PostgreSQL: FOR SHARE. SQLite: nothing, its one writer
   * holds the whole database until the commit.
   */
  readonly keepsRow: Query;
  /**
   * Appended to a SELECT inside a write whose row the write goes on to change: no other
   * writer may change it until the commit. PostgreSQL: FOR UPDATE. SQLite: nothing.
   */
  readonly locksRow: Query;
  /**
   * A statement that makes the writes naming `key` take turns from here to the commit
   * (a PostgreSQL advisory lock); null on SQLite, whose writes take turns anyway.
   */
  turnsOn(key: string): Query | null;
  /** `column` is one of `values` (no row when the list is empty). */
  inList(column: Query, values: readonly string[]): Query;
  /**
   * The statements that insert `insert.rows` into `insert.table` numbered on from the
   * run's last `seq`, in order, each returning the `seq`s it inserted. PostgreSQL: one
   * statement for all rows (one round trip to the server). SQLite: one statement per row
   * with the same text (in-process, a statement costs about a µs, and a text per number
   * of rows would be compiled again for every new count).
   */
  appendNumbered(insert: NumberedInsert): Query[];
  /**
   * Written after a table in FROM: the index the statement must read it through.
   * SQLite: INDEXED BY (its planner would pick another, slower one). PostgreSQL: nothing,
   * it takes no hints. `index` is a name fixed in the code.
   */
  indexedBy(index: string): Query;
}

/** Rows of an append-only table numbered per run (run_events, run_entries). */
export interface NumberedInsert {
  /** Fixed in the code, never from a caller. */
  readonly table: 'run_events' | 'run_entries';
  readonly runId: string;
  /** Columns every row shares (the write's time, the attempt), in the order given. */
  readonly shared: readonly (readonly [column: string, value: number])[];
  /** The columns each row has its own text for. */
  readonly columns: readonly string[];
  /** One list of texts per row, in `columns` order. */
  readonly rows: readonly (readonly string[])[];
}
