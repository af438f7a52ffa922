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
