// The row mapping is shared with the PostgreSQL backend (src/store/rows.ts).
export * from '../rows.ts';
