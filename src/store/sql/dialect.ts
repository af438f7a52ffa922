// What the shared repositories (../repositories/) leave to the backend: how a
// placeholder is written and the few statements whose SQL differs between SQLite and
// PostgreSQL. Each backend implements it once (sqlite/dialect.ts, postgres/dialect.ts).

import type { Query, SqlValue } from './query.ts';
import type { Op } from './steps.ts';

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
   * Inserts `insert.rows` into its table numbered on from the run's last `seq`, in order;
   * the seq of the first row (the others follow it by one). PostgreSQL: one statement for
   * all rows (one round trip). SQLite: the last seq read once, then one statement per row
   * with the same text (in-process a statement costs about a µs; a text per number of rows
   * would be compiled again for each count, and RETURNING costs SQLite 2 µs per statement).
   */
  appendNumbered(insert: NumberedInsert): Op<number>;
  /**
   * A boolean column is true, written as the backend's partial indexes say it (SQLite:
   * `= 1`, which its planner matches to an index's `WHERE enabled = 1` where `= TRUE` is
   * not; PostgreSQL: the column itself).
   */
  isTrue(column: Query): Query;
  /**
   * After a table (and its alias) in FROM: the index SQLite must plan the read with,
   * where its planner would pick a worse one (` INDEXED BY name`; an index that is gone
   * is an error, not a silent full scan). PostgreSQL: nothing, its planner is left alone.
   */
  indexedBy(index: string): Query;
  /**
   * The text of the JSON document's member `key` when that member is a JSON string, else
   * NULL. `document` is JSON text; `key` is fixed in the code.
   */
  jsonText(document: Query, key: string): Query;
  /**
   * Appended to a SELECT inside a write that takes the rows it reads for itself (a claim,
   * a sweep). PostgreSQL: FOR UPDATE OF the named tables (aliases) SKIP LOCKED, so two
   * processes' claims split the rows instead of queueing on them (or taking the same
   * ones). SQLite: nothing, its one writer claims alone.
   */
  skipsLocked(tables: readonly string[]): Query;
  /**
   * A statement whose one row's `taken` says whether this transaction took the turn on
   * `key` without waiting, held to the commit (PostgreSQL: pg_try_advisory_xact_lock,
   * keyed by the schema too, since several keel schemas may share a database); null on
   * SQLite, whose one writer has every turn. The retention pruner's batches take it.
   */
  triesTurnOn(key: string): Query | null;
  /**
   * A subquery of `values` as rows (`value`, `ord`), in their order, bound as one value
   * (JSON text), so that a statement's text does not depend on how many there are.
   * SQLite: json_each; PostgreSQL: json_array_elements_text WITH ORDINALITY.
   */
  orderedTexts(values: readonly string[]): Query;
}

/** An append-only table numbered per run (run_events, run_entries) and the columns written. */
export interface NumberedTable {
  /** Fixed in the code, never from a caller. */
  readonly table: 'run_events' | 'run_entries';
  /** Columns every row of one append shares (the write's time, the attempt). */
  readonly shared: readonly string[];
  /** The columns each row has its own text for. */
  readonly columns: readonly string[];
}

/** Rows to append: `shared` and each row's texts in the order of the table's columns. */
export interface NumberedInsert {
  /** A constant of the code: a dialect keeps the statement built for it. */
  readonly into: NumberedTable;
  readonly runId: string;
  readonly shared: readonly number[];
  readonly rows: readonly (readonly string[])[];
}
