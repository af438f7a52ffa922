// The tenant export file (`keel export` / `keel import`, docs/operations.md, "Moving a
// tenant"), the same for every backend: how each value of the tables a tenant owns
// (tenant-tables.ts) is written to and read back from one JSON line, and what an import
// checks before it writes. Both backends read and write the rows with their own SQL;
// they differ only in a few values' shapes (a boolean is 0/1 on SQLite, a memory vector
// is a sqlite-vec row on SQLite and a real[] column on PostgreSQL).
//
// A file is: one header line, one line per row (parents before children: the tenant,
// then its runs before their journal), one end line with the row count, so a file cut
// short is refused instead of imported in part.

import { isKeelError, KeelError } from '../../errors.ts';
import { NAME_PATTERN } from '../../ids.ts';
import { SCHEDULER_STALE_MS } from '../../schedules/scheduler-watch.ts';
import type { ColumnKind, ColumnSpec, TableSpec } from './tenant-tables.ts';
import { TABLES_BY_NAME } from './tenant-tables.ts';

export const EXPORT_FORMAT = 'keel-tenant-export';
export const EXPORT_END_FORMAT = 'keel-tenant-export-end';
export const EXPORT_VERSION = 1;

/** A row as both backends hand it over: bytes and vectors as Buffers, booleans as such. */
export type ExportValue = string | number | boolean | Buffer | null;
export type ExportRow = Record<string, ExportValue>;

/** What `keel export` asks a backend for. */
export interface TenantExportOptions {
  tenant: string;
  /** Export runs in flight too (the source's processes must all be stopped). */
  includeActive: boolean;
}

/** Receives each exported row, in export order. */
export type EmitRow = (table: string, row: ExportRow) => void;

export interface ExportHeader {
  format: typeof EXPORT_FORMAT;
  version: typeof EXPORT_VERSION;
  tenant: string;
  exported_at: string;
  keel_version: string;
  source: 'sqlite' | 'postgres';
  /** Whether runs in flight were allowed (--include-active); see docs/operations.md. */
  include_active: boolean;
}

/** A checked export, in file order: what an import writes, in one transaction. */
export interface TenantDump {
  header: ExportHeader;
  /** `line`: where the row is in the file (1 is the header), for the store's refusals. */
  rows: { table: string; row: ExportRow; line: number }[];
}

function encodeValue(kind: ColumnKind, value: ExportValue): unknown {
  if (value === null) return null;
  if (kind === 'bytes' || kind === 'vector') return Buffer.from(value as Buffer).toString('base64');
  if (kind === 'bool') return value === true || value === 1;
  return value;
}

/** One row as its line, values in the column order of its table. */
export function encodeRowLine(table: string, row: ExportRow): string {
  const spec = TABLES_BY_NAME.get(table);
  if (!spec) throw new Error(`not a tenant table: ${table}`);
  const out: Record<string, unknown> = {};
  for (const column of spec.columns)
    out[column.name] = encodeValue(column.kind, row[column.name] ?? null);
  return JSON.stringify({ table, row: out });
}

export function encodeEndLine(rows: number): string {
  return JSON.stringify({ format: EXPORT_END_FORMAT, rows });
}

/** A refused import: names the line, so the file can be fixed or re-exported. */
function invalid(line: number, why: string): KeelError {
  return new KeelError('VALIDATION_FAILED', `line ${line}: ${why}`);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function decodeValue(line: number, table: string, column: ColumnSpec, value: unknown): ExportValue {
  const where = `${table}.${column.name}`;
  if (value === null || value === undefined) {
    if (column.nullable) return null;
    throw invalid(line, `${where} is required`);
  }
  switch (column.kind) {
    case 'text':
      if (typeof value === 'string' && !value.includes('\u0000')) return value;
      break;
    case 'json':
      if (typeof value === 'string' && !value.includes('\u0000') && parsesAsJson(value)) {
        return value;
      }
      break;
    case 'int':
      if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
      break;
    case 'real':
      if (typeof value === 'number' && Number.isFinite(value)) return value;
      break;
    case 'bool':
      if (typeof value === 'boolean') return value;
      break;
    case 'bytes':
    case 'vector':
      if (typeof value === 'string' && value.length % 4 === 0 && BASE64.test(value)) {
        const bytes = Buffer.from(value, 'base64');
        if (column.kind === 'bytes' || bytes.length % 4 === 0) return bytes;
      }
      break;
  }
  throw invalid(line, `${where}: expected ${column.kind}`);
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseJson(line: number, text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid(line, 'not a JSON line');
  }
  if (!isObject(value)) throw invalid(line, 'expected a JSON object');
  return value;
}

export function decodeHeader(text: string): ExportHeader {
  const header = parseJson(1, text);
  if (header.format !== EXPORT_FORMAT) throw invalid(1, `not a ${EXPORT_FORMAT} file`);
  if (header.version !== EXPORT_VERSION) {
    throw invalid(
      1,
      `version ${String(header.version)}: this keel reads version ${EXPORT_VERSION}`,
    );
  }
  if (typeof header.tenant !== 'string' || !NAME_PATTERN.test(header.tenant)) {
    throw invalid(1, `tenant must match ${NAME_PATTERN.source}`);
  }
  return {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    tenant: header.tenant,
    exported_at: String(header.exported_at ?? ''),
    keel_version: String(header.keel_version ?? ''),
    source: header.source === 'postgres' ? 'postgres' : 'sqlite',
    include_active: header.include_active === true,
  };
}

/**
 * Reads a whole file's lines (without their newlines) into a checked dump, or throws
 * VALIDATION_FAILED naming the first bad line. Checked: the header, every row's table,
 * columns and value kinds, that every row is the header's tenant's (its own column, or
 * a run of the file), the memory vector rule, and the end line's count.
 */
export function decodeDump(lines: readonly string[]): TenantDump {
  if (lines.length === 0 || lines[0] === '') throw invalid(1, 'the file is empty');
  const header = decodeHeader(lines[0] ?? '');
  const rows: TenantDump['rows'] = [];
  const runIds = new Set<string>();
  let ended = false;
  for (let index = 1; index < lines.length; index += 1) {
    const number = index + 1;
    const text = lines[index] ?? '';
    if (ended) {
      if (text === '') continue;
      throw invalid(number, 'a line after the end line');
    }
    const value = parseJson(number, text);
    if (value.format === EXPORT_END_FORMAT) {
      if (value.rows !== rows.length) {
        throw invalid(
          number,
          `the end line counts ${String(value.rows)} rows, the file has ${rows.length}`,
        );
      }
      ended = true;
      continue;
    }
    const spec = typeof value.table === 'string' ? TABLES_BY_NAME.get(value.table) : undefined;
    if (!spec) throw invalid(number, `unknown table ${JSON.stringify(value.table)}`);
    if (!isObject(value.row)) throw invalid(number, `${spec.table}: row must be an object`);
    const given = value.row;
    const extra = Object.keys(given).find((name) => !spec.columns.some((c) => c.name === name));
    if (extra !== undefined) throw invalid(number, `${spec.table}: unknown column ${extra}`);
    const row: ExportRow = {};
    for (const column of spec.columns)
      row[column.name] = decodeValue(number, spec.table, column, given[column.name]);
    checkOwner(number, spec, row, header.tenant, runIds, rows.length === 0);
    if (spec.table === 'memory_facts') checkVectorRow(number, row);
    if (spec.table === 'runs') runIds.add(String(row.run_id));
    rows.push({ table: spec.table, row, line: number });
  }
  if (!ended) throw invalid(lines.length, 'the file ends without its end line (cut short?)');
  return { header, rows };
}

function checkOwner(
  line: number,
  spec: TableSpec,
  row: ExportRow,
  tenant: string,
  runIds: ReadonlySet<string>,
  first: boolean,
): void {
  if (first !== (spec.table === 'tenants')) {
    throw invalid(line, first ? 'the first row must be the tenant' : 'a second tenant row');
  }
  const owner = spec.owner === 'run' ? null : row[spec.owner === 'name' ? 'name' : 'tenant'];
  if (owner !== null && owner !== tenant) {
    throw invalid(
      line,
      `${spec.table}: row of tenant ${JSON.stringify(owner)}, the file is ${JSON.stringify(tenant)}'s`,
    );
  }
  if ('run_id' in row && spec.table !== 'runs' && spec.table !== 'usage_ledger') {
    if (!runIds.has(String(row.run_id))) {
      throw invalid(
        line,
        `${spec.table}: run ${String(row.run_id)} is not an earlier run of the file`,
      );
    }
  }
}

/** A stored vector has its embedder and its dimension; a fact without one has neither. */
function checkVectorRow(line: number, row: ExportRow): void {
  const vector = row.vector as Buffer | null;
  if (vector === null) {
    if (row.embedder !== null || row.dim !== null) {
      throw invalid(line, 'memory_facts: embedder and dim without a vector');
    }
    return;
  }
  if (row.embedder === null || row.dim !== vector.length / 4 || vector.length === 0) {
    throw invalid(line, 'memory_facts: vector needs its embedder and dim = its length');
  }
}

/** A float32 vector's bytes as numbers (PostgreSQL's real[]), and back. */
export function vectorValues(bytes: Buffer): number[] {
  const values: number[] = [];
  for (let offset = 0; offset < bytes.length; offset += 4) values.push(bytes.readFloatLE(offset));
  return values;
}

export function vectorBytes(values: readonly number[]): Buffer {
  const bytes = Buffer.alloc(values.length * 4);
  values.forEach((value, index) => bytes.writeFloatLE(value, index * 4));
  return bytes;
}

/** The refusal of an export while the tenant has runs that the source may still run. */
export function activeRunsRefusal(tenant: string, active: readonly string[]): KeelError {
  return new KeelError(
    'CONFLICT',
    `tenant ${tenant} has ${active.length} run(s) in flight (queued, running or waiting for approval: ${active.slice(0, 3).join(', ')}${active.length > 3 ? ', …' : ''}); let them finish or cancel them, or stop every keel process on this store and export with --include-active`,
  );
}

/**
 * What shows that a keel process still works on a shared store (PostgreSQL, where no
 * lock says so), read in the export's snapshot; times are the database's milliseconds.
 */
export interface SourceActivity {
  now: number;
  /** The tenant's runs in status `running`, with their lease. */
  running: readonly { run_id: string; lease_expires_at: number | null }[];
  /** The scheduler heartbeat (any tenant's scheduler: it is one per store); null if none. */
  lastBeat: { holder: string; beat_at: number } | null;
}

/**
 * `--include-active` moves runs in flight, to resume on the target: refused while a keel
 * may still run them on the source — a run leased until later (its worker renews the
 * lease while it works), or a scheduler that beat within SCHEDULER_STALE_MS (its process
 * also claims runs unless it is --role scheduler). Either would run them on both stores,
 * their effects twice. Null when neither shows.
 */
export function sourceInUseRefusal(tenant: string, activity: SourceActivity): KeelError | null {
  const leased = activity.running.filter(
    (run) => run.lease_expires_at !== null && run.lease_expires_at > activity.now,
  );
  const beat = activity.lastBeat;
  const beatAge = beat === null ? null : activity.now - beat.beat_at;
  const evidence: string[] = [];
  if (leased.length > 0) {
    const latest = Math.max(...leased.map((run) => run.lease_expires_at ?? 0));
    evidence.push(
      `${leased.length} run(s) of tenant ${tenant} held by a worker (${leased
        .slice(0, 3)
        .map((run) => run.run_id)
        .join(
          ', ',
        )}${leased.length > 3 ? ', …' : ''}; leased until ${new Date(latest).toISOString()})`,
    );
  }
  if (beat !== null && beatAge !== null && beatAge <= SCHEDULER_STALE_MS) {
    evidence.push(
      `a scheduler beat ${Math.max(0, Math.round(beatAge / 1000))} s ago (${beat.holder}; stale after ${SCHEDULER_STALE_MS / 1000} s)`,
    );
  }
  if (evidence.length === 0) return null;
  return new KeelError(
    'CONFLICT',
    `--include-active: a keel process still works on this store: ${evidence.join('; ')}; stop every keel process on it, then export again once the lease has expired and the heartbeat is stale`,
  );
}

/**
 * A row the target store refused (a key another tenant already holds there, such as a
 * run id or a token id): names the line; the transaction is rolled back.
 */
export function rowRefusal(line: number, table: string, error: unknown): unknown {
  if (isKeelError(error)) return error;
  const why = error instanceof Error ? error.message : String(error);
  return new KeelError(
    'CONFLICT',
    `line ${line}: the store refused the ${table} row (${why}); nothing was imported`,
  );
}

export function tenantExistsRefusal(tenant: string): KeelError {
  return new KeelError(
    'CONFLICT',
    `tenant ${tenant} already exists on the target store; nothing was imported`,
  );
}
