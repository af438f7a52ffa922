// The row mapping is shared with the SQLite backend (src/store/rows.ts). bigint columns
// arrive as numbers (the pool's type parser: every value keel stores fits in 2^53).
export * from '../rows.ts';
