// How the SQLite store writes a LIMIT whose value is bound: `LIMIT CAST(? AS INTEGER)`,
// never `LIMIT ?`. SQLite's planner reads the value bound to a bare LIMIT parameter, so
// it marks the statement expired at every new binding and compiles it again at its next
// run (better-sqlite3 binds at every call): 5–100 µs a call on keel's schema, measured,
// where the run itself takes about 1 µs. A LIMIT that is an expression keeps the
// compiled plan. The memory searches (memory-search.ts) still bind a bare LIMIT and are
// compiled again per call (not on a turn's path; the keyword search with short words
// would be anyway, its bound LIKE patterns are read by the planner too): left for a change
// with their own tests. test/store-sqlite-statements.test.ts holds every other statement.

/** The LIMIT's parameter as an expression, so binding it keeps the statement compiled. */
export function boundLimit(param: string): string {
  return `CAST(${param} AS INTEGER)`;
}
