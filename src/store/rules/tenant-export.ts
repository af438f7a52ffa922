// The tenant export file (`keel export` / `keel import`, docs/operations.md, "Moving a
// tenant"), the same for every backend: which tables a tenant owns, their columns and
// how each value is written to and read back from one JSON line. Both backends read
// and write these rows with their own SQL; only the column kinds below differ between
// them (a boolean is 0/1 on SQLite, bytes are a Buffer on both, a memory vector is a
// sqlite-vec row on SQLite and a real[] column on PostgreSQL).
//
// A file is: one header line, one line per row (parents before children: the tenant,
// then its runs before their journal), one end line with the row count, so a file cut
// short is refused instead of imported in part.

import { isKeelError, KeelError } from '../../errors.ts';

export const EXPORT_FORMAT = 'keel-tenant-export';
export const EXPORT_END_FORMAT = 'keel-tenant-export-end';
export const EXPORT_VERSION = 1;

/** How a value is written: bytes and vectors (float32, little-endian) as base64. */
export type ColumnKind = 'text' | 'int' | 'real' | 'bool' | 'bytes' | 'vector';

export interface ColumnSpec {
  name: string;
  kind: ColumnKind;
  nullable: boolean;
}

export interface TableSpec {
  table: string;
  /** How a row belongs to the tenant: its own column, or through its run. */
  owner: 'tenant' | 'name' | 'run';
  columns: readonly ColumnSpec[];
  /** Export order inside the table (a run's queue position keeps the FIFO order). */
  orderBy: string;
}

function columns(spec: string): ColumnSpec[] {
  return spec
    .trim()
    .split(/\s+/)
    .map((word) => {
      const [name = '', kind = ''] = word.replace(/\?$/, '').split(':');
      return { name, kind: kind as ColumnKind, nullable: word.endsWith('?') };
    });
}

/**
 * Every table that holds a tenant's data, parents first. Not here: tenant_usage (the
 * target's triggers recount it from the facts and artifacts imported), the row ids
 * (queue_pos, fact_id: the target numbers its own rows, in the exported order) and the
 * scheduler heartbeat (not a tenant's).
 */
export const TENANT_TABLES: readonly TableSpec[] = [
  {
    table: 'tenants',
    owner: 'name',
    columns: columns('name:text metadata:text created_at:int updated_at:int'),
    orderBy: 'name',
  },
  {
    table: 'tenant_budgets',
    owner: 'tenant',
    columns: columns('tenant:text daily_tokens:int? daily_cost_usd:real?'),
    orderBy: 'tenant',
  },
  {
    table: 'tokens',
    owner: 'tenant',
    columns: columns('id:text tenant:text name:text hash:text created_at:int'),
    orderBy: 'id',
  },
  {
    table: 'agents',
    owner: 'tenant',
    columns: columns('tenant:text name:text spec:text created_at:int updated_at:int'),
    orderBy: 'name',
  },
  {
    table: 'runs',
    owner: 'tenant',
    columns: columns(`run_id:text tenant:text agent:text scope:text source:text input:text
      request_id:text? fingerprint:text delivery_destination:text? status:text output:text?
      error:text? attempt:int steps:int usage:text elapsed_ms:int lease_owner:text?
      lease_expires_at:int? created_at:int started_at:int? finished_at:int? steer_target:text?`),
    orderBy: 'queue_pos',
  },
  {
    table: 'run_entries',
    owner: 'run',
    columns: columns('run_id:text seq:int attempt:int kind:text body:text ts:int'),
    orderBy: 'run_id, seq',
  },
  {
    table: 'run_events',
    owner: 'run',
    columns: columns('run_id:text seq:int ts:int type:text data:text'),
    orderBy: 'run_id, seq',
  },
  {
    table: 'run_steers',
    owner: 'tenant',
    columns: columns(`steer_id:text tenant:text run_id:text entry_seq:int request_id:text?
      fingerprint:text created_at:int`),
    orderBy: 'steer_id',
  },
  {
    table: 'approvals',
    owner: 'tenant',
    columns: columns(`run_id:text call_id:text tenant:text agent:text scope:text step:int
      tool:text arguments:text status:text note:text? requested_at:int expires_at:int?
      decided_at:int?`),
    orderBy: 'run_id, call_id',
  },
  {
    table: 'deliveries',
    owner: 'tenant',
    columns: columns(`delivery_id:text tenant:text run_id:text destination:text status:text
      attempt:int idempotency_key:text next_attempt_at:int claim_token_hash:text?
      claim_expires_at:int? last_error:text? created_at:int updated_at:int kind:text
      call_id:text? payload:text?`),
    orderBy: 'delivery_id',
  },
  {
    table: 'threads',
    owner: 'tenant',
    columns: columns(`tenant:text agent:text scope:text revision:int turns:int messages:text
      updated_at:int`),
    orderBy: 'agent, scope',
  },
  {
    table: 'artifacts',
    owner: 'tenant',
    columns: columns(`tenant:text path:text body:bytes content_type:text size_bytes:int
      sha256:text metadata:text created_at:int updated_at:int`),
    orderBy: 'path',
  },
  {
    table: 'schedules',
    owner: 'tenant',
    columns: columns(`tenant:text name:text agent:text scope:text payload:text timing:text
      misfire:text delivery_destination:text? enabled:bool next_fire_at:int?
      last_fired_at:int? last_run_id:text? last_error:text? revision:int created_at:int
      updated_at:int`),
    orderBy: 'name',
  },
  {
    table: 'memory_facts',
    owner: 'tenant',
    columns: columns(`tenant:text namespace:text id:text text:text metadata:text
      created_at:int updated_at:int embedder:text? dim:int? vector:vector?`),
    orderBy: 'fact_id',
  },
  {
    table: 'mcp_servers',
    owner: 'tenant',
    columns: columns(`tenant:text name:text spec:text tools:text last_error:text?
      created_at:int updated_at:int`),
    orderBy: 'name',
  },
  {
    table: 'tenant_secrets',
    owner: 'tenant',
    columns: columns('tenant:text name:text value:text created_at:int updated_at:int'),
    orderBy: 'name',
  },
  {
    table: 'tenant_webhooks',
    owner: 'tenant',
    columns: columns('tenant:text name:text url:text secret:text created_at:int updated_at:int'),
    orderBy: 'name',
  },
  {
    table: 'wasm_tools',
    owner: 'tenant',
    columns: columns(`tenant:text name:text manifest:text module:bytes sha256:text
      created_at:int updated_at:int`),
    orderBy: 'name',
  },
  {
    table: 'usage_ledger',
    owner: 'tenant',
    columns: columns(`run_id:text day:text model:text tenant:text agent:text scope:text
      input_tokens:int output_tokens:int model_calls:int cost_usd:real`),
    orderBy: 'run_id, day, model',
  },
  {
    table: 'usage_tenant_day',
    owner: 'tenant',
    columns: columns(`tenant:text day:text input_tokens:int output_tokens:int model_calls:int
      cost_usd:real`),
    orderBy: 'day',
  },
];

const TABLES_BY_NAME = new Map(TENANT_TABLES.map((spec) => [spec.table, spec]));

/** A row as both backends hand it over: bytes and vectors as Buffers, booleans as such. */
export type ExportValue = string | number | boolean | Buffer | null;
export type ExportRow = Record<string, ExportValue>;

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

/** The run statuses that are not final: a run the source could still be working on. */
export const ACTIVE_RUN_STATUSES = ['queued', 'running', 'waiting'] as const;

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
  if (typeof header.tenant !== 'string' || header.tenant === '')
    throw invalid(1, 'tenant is required');
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

/**
 * The statement that reads one table's rows of a tenant; `param` is the placeholder.
 * `vectors`: 'column' reads the memory vector with its fact (PostgreSQL's real[]),
 * 'apart' reads fact_id instead, to find the vector in its sqlite-vec table.
 */
export function selectTenantRows(spec: TableSpec, param: string, vectors: VectorPlace): string {
  const names = columnNames(spec, vectors);
  if (spec.table === 'memory_facts' && vectors === 'apart') names.push('fact_id');
  const where =
    spec.owner === 'run'
      ? `run_id IN (SELECT run_id FROM runs WHERE tenant = ${param})`
      : `${spec.owner === 'name' ? 'name' : 'tenant'} = ${param}`;
  return `SELECT ${names.join(', ')} FROM ${spec.table} WHERE ${where} ORDER BY ${spec.orderBy}`;
}

export type VectorPlace = 'column' | 'apart';

/** The columns a statement names, in spec order. */
export function columnNames(spec: TableSpec, vectors: VectorPlace): string[] {
  return spec.columns.filter((c) => c.kind !== 'vector' || vectors === 'column').map((c) => c.name);
}

/**
 * The statement that writes `count` rows of one table; `param(i)` is the i-th (0-based)
 * placeholder, row after row.
 */
export function insertRows(
  spec: TableSpec,
  count: number,
  param: (index: number) => string,
  vectors: VectorPlace,
): string {
  const names = columnNames(spec, vectors);
  const tuples = Array.from(
    { length: count },
    (_, row) => `(${names.map((_, column) => param(row * names.length + column)).join(', ')})`,
  );
  return `INSERT INTO ${spec.table} (${names.join(', ')}) VALUES ${tuples.join(', ')}`;
}

export function insertRow(
  spec: TableSpec,
  param: (index: number) => string,
  vectors: VectorPlace,
): string {
  return insertRows(spec, 1, param, vectors);
}

export function tableSpec(table: string): TableSpec {
  const spec = TABLES_BY_NAME.get(table);
  if (!spec) throw new Error(`not a tenant table: ${table}`);
  return spec;
}

/** The refusal of an export while the tenant has runs that the source may still run. */
export function activeRunsRefusal(tenant: string, active: readonly string[]): KeelError {
  return new KeelError(
    'CONFLICT',
    `tenant ${tenant} has ${active.length} run(s) in flight (queued, running or waiting for approval: ${active.slice(0, 3).join(', ')}${active.length > 3 ? ', …' : ''}); let them finish or cancel them, or stop every keel process on this store and export with --include-active`,
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
