// The one SELECT behind every keyset-paged list of rows keyed by a string column (runs,
// deliveries, schedules): the tenant, equality filters, further conditions, the cursor
// as "after this key", ordered by the key, one row more than the page to know whether
// another page follows (pageOf in ../rows.ts). Only the parameter syntax differs between
// the backends, so each passes `bind`. A run's entries page the same way by seq
// (../repositories/trace.ts, seqPageOf), so reading a long run page by page reads each
// entry once.

import { decodeCursor } from '../rows.ts';
import { WASM_TOOL_INFO_COLUMNS } from './wasm-tools.ts';

export type KeysetValue = string | number;

/** A condition on one parameter; the SQL may name it more than once. */
interface KeysetCondition {
  value: KeysetValue;
  sql: (param: () => string) => string;
}

export interface KeysetList {
  table: string;
  tenant: string;
  /** `column = value` for each value that is not undefined. */
  equals: Readonly<Record<string, KeysetValue | undefined>>;
  conditions?: readonly KeysetCondition[];
  /** A string column unique within the tenant. */
  key: string;
  /** The select list; default `*` (a table with large columns names the small ones). */
  columns?: string;
  descending: boolean;
  limit: number;
  cursor: string | undefined;
}

/**
 * `bind` records one parameter and returns how the SQL names it; the returned function
 * is called once for each place the SQL mentions it, in text order. `limitOf` wraps the
 * LIMIT's parameter (SQLite's reason: limitOf in ../sql/query.ts).
 */
export function keysetListSql(
  list: KeysetList,
  bind: (value: KeysetValue) => () => string,
  limitOf: (param: string) => string = (param) => param,
): string {
  const where = [`tenant = ${bind(list.tenant)()}`];
  for (const [column, value] of Object.entries(list.equals)) {
    if (value !== undefined) where.push(`${column} = ${bind(value)()}`);
  }
  for (const condition of list.conditions ?? []) where.push(condition.sql(bind(condition.value)));
  if (list.cursor !== undefined) {
    const [after] = decodeCursor(list.cursor, ['string']) as [string];
    where.push(`${list.key} ${list.descending ? '<' : '>'} ${bind(after)()}`);
  }
  const order = `${list.key}${list.descending ? ' DESC' : ''}`;
  return `SELECT ${list.columns ?? '*'} FROM ${list.table} WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ${limitOf(bind(list.limit + 1)())}`;
}

/** Runs, newest first (run ids sort by creation). */
export const RUN_LIST = { table: 'runs', key: 'run_id', descending: true } as const;

/** Agents by name. */
export const AGENT_LIST = { table: 'agents', key: 'name', descending: false, equals: {} } as const;

/** A tenant's secrets by name: names and times, never the values. */
export const SECRET_LIST = {
  table: 'tenant_secrets',
  key: 'name',
  descending: false,
  equals: {},
  columns: 'name, created_at, updated_at',
} as const;

/** A tenant's webhooks by name. */
export const WEBHOOK_LIST = {
  table: 'tenant_webhooks',
  key: 'name',
  descending: false,
  equals: {},
} as const;

/** A tenant's MCP servers by name. */
export const MCP_SERVER_LIST = {
  table: 'mcp_servers',
  key: 'name',
  descending: false,
  equals: {},
} as const;

/** A tenant's WebAssembly tools by name, without the module bytes. */
export const WASM_TOOL_LIST = {
  table: 'wasm_tools',
  key: 'name',
  descending: false,
  equals: {},
  columns: WASM_TOOL_INFO_COLUMNS,
} as const;

/** Schedules by name. */
export const SCHEDULE_LIST = { table: 'schedules', key: 'name', descending: false } as const;

/** Deliveries, newest first, by status and run. */
export function deliveryList(filter: { status?: string | undefined; run_id?: string | undefined }) {
  return {
    table: 'deliveries',
    key: 'delivery_id',
    descending: true,
    equals: { status: filter.status, run_id: filter.run_id },
  } as const;
}

/** One page of a run's entries: next_after (null on the last page) is the next `after`. */
export interface EntryPage<T> {
  items: T[];
  next_after: number | null;
}

/** A page from rows fetched with limit + 1, keyed by seq. */
export function seqPageOf<R extends { seq: number }, T>(
  rows: R[],
  limit: number,
  map: (row: R) => T,
): EntryPage<T> {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    items: page.map(map),
    next_after: rows.length > limit && last !== undefined ? last.seq : null,
  };
}
