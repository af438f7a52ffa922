// How the SQLite store writes a LIMIT whose value is bound: `LIMIT CAST(? AS INTEGER)`,
// never `LIMIT ?`. SQLite's planner reads the value bound to a bare LIMIT parameter, so
// it marks the statement expired at every new binding and compiles it again at its next
// run (better-sqlite3 binds at every call): 5–100 µs a call on keel's schema, measured,
// where the run itself takes about 1 µs. A LIMIT that is an expression keeps the
// compiled plan. The memory searches (memory-search.ts) keep a bare LIMIT: sqlite-vec's
// nearest-neighbour scan takes it as a constraint of its virtual table, and the keyword
// search is compiled again for each query anyway (the planner reads its bound LIKE
// patterns too). test/store-sqlite-statements.test.ts holds every other statement to it.

/** The LIMIT's parameter as an expression, so binding it keeps the statement compiled. */
export function boundLimit(param: string): string {
  return `CAST(${param} AS INTEGER)`;
}
