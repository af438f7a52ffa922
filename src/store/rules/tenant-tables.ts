// The tables a tenant owns, for the tenant export (rules/tenant-export.ts): each one's
// columns and how each value is kept in the file, and the statements both backends run
// over them (only the placeholder differs: `?` on SQLite, `$n` on PostgreSQL).

/**
 * How a value is written: `json` is text keel stored as a JSON document (an import
 * checks it parses), bytes and vectors (float32, little-endian) are base64.
 */
export type ColumnKind = 'text' | 'json' | 'int' | 'real' | 'bool' | 'bytes' | 'vector';

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
    columns: columns('name:text metadata:json created_at:int updated_at:int'),
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
    columns: columns('tenant:text name:text spec:json created_at:int updated_at:int'),
    orderBy: 'name',
  },
  {
    table: 'runs',
    owner: 'tenant',
    columns: columns(`run_id:text tenant:text agent:text scope:text source:text input:json
      request_id:text? fingerprint:text delivery_destination:text? status:text output:json?
      error:json? attempt:int steps:int usage:json elapsed_ms:int lease_owner:text?
      lease_expires_at:int? created_at:int started_at:int? finished_at:int? steer_target:text?`),
    orderBy: 'queue_pos',
  },
  {
    table: 'run_entries',
    owner: 'run',
    columns: columns('run_id:text seq:int attempt:int kind:text body:json ts:int'),
    orderBy: 'run_id, seq',
  },
  {
    table: 'run_events',
    owner: 'run',
    columns: columns('run_id:text seq:int ts:int type:text data:json'),
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
      call_id:text? payload:json?`),
    orderBy: 'delivery_id',
  },
  {
    table: 'threads',
    owner: 'tenant',
    columns: columns(`tenant:text agent:text scope:text revision:int turns:int messages:json
      updated_at:int`),
    orderBy: 'agent, scope',
  },
  {
    table: 'artifacts',
    owner: 'tenant',
    columns: columns(`tenant:text path:text body:bytes content_type:text size_bytes:int
      sha256:text metadata:json created_at:int updated_at:int`),
    orderBy: 'path',
  },
  {
    table: 'schedules',
    owner: 'tenant',
    columns: columns(`tenant:text name:text agent:text scope:text payload:json timing:json
      misfire:text delivery_destination:text? enabled:bool next_fire_at:int?
      last_fired_at:int? last_run_id:text? last_error:text? revision:int created_at:int
      updated_at:int`),
    orderBy: 'name',
  },
  {
    table: 'memory_facts',
    owner: 'tenant',
    columns: columns(`tenant:text namespace:text id:text text:text metadata:json
      created_at:int updated_at:int embedder:text? dim:int? vector:vector?`),
    orderBy: 'fact_id',
  },
  {
    table: 'mcp_servers',
    owner: 'tenant',
    columns: columns(`tenant:text name:text spec:json tools:json last_error:text?
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
    columns: columns(`tenant:text name:text manifest:json module:bytes sha256:text
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

export const TABLES_BY_NAME = new Map(TENANT_TABLES.map((spec) => [spec.table, spec]));

/** The run statuses that are not final: a run the source could still be working on. */
export const ACTIVE_RUN_STATUSES = ['queued', 'running', 'waiting'] as const;

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

export function tableSpec(table: string): TableSpec {
  const spec = TABLES_BY_NAME.get(table);
  if (!spec) throw new Error(`not a tenant table: ${table}`);
  return spec;
}
