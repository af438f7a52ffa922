// Database rows and their API shapes, shared by both backends: each stores times as
// integer milliseconds (PostgreSQL as bigint, parsed to numbers) and JSON documents as
// text, so one mapping serves both. Times leave the store as RFC 3339 UTC strings with
// milliseconds.

import type {
  ArtifactStat,
  Agent,
  AgentSpec,
  Delivery,
  DeliveryKind,
  DeliveryStatus,
  JsonObject,
  RunEntry,
  Run,
  RunError,
  RunSource,
  RunStatus,
  MisfirePolicy,
  Schedule,
  ScheduleTiming,
  Tenant,
  TraceEvent,
  Usage,
} from '../types.ts';
import { KeelError } from '../errors.ts';

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : iso(ms);
}

export function parseJson<T>(text: string): T {
  return JSON.parse(text) as T;
}

/** Opaque keyset cursors: base64url of a JSON array of the last row's sort key. */
function encodeCursor(key: (string | number)[]): string {
  return Buffer.from(JSON.stringify(key), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string, shape: ('string' | 'number')[]): (string | number)[] {
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    key = null;
  }
  if (
    !Array.isArray(key) ||
    key.length !== shape.length ||
    key.some((part, index) => typeof part !== shape[index])
  ) {
    throw new KeelError('VALIDATION_FAILED', 'cursor is not valid');
  }
  return key as (string | number)[];
}

/** A page from rows fetched with limit + 1. */
export function pageOf<R, T>(
  rows: R[],
  limit: number,
  map: (row: R) => T,
  keyOf: (row: R) => (string | number)[],
): { items: T[]; next_cursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    items: page.map(map),
    next_cursor: rows.length > limit && last !== undefined ? encodeCursor(keyOf(last)) : null,
  };
}

export interface TenantRow {
  name: string;
  metadata: string;
  created_at: number;
  updated_at: number;
}

export function toTenant(row: TenantRow): Tenant {
  return {
    name: row.name,
    metadata: parseJson<JsonObject>(row.metadata),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export interface AgentRow {
  tenant: string;
  name: string;
  spec: string;
  created_at: number;
  updated_at: number;
}

export function toAgent(row: AgentRow): Agent {
  return {
    ...parseJson<AgentSpec>(row.spec),
    tenant: row.tenant,
    name: row.name,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export interface RunRow {
  queue_pos: number;
  run_id: string;
  tenant: string;
  agent: string;
  scope: string;
  source: RunSource;
  input: string;
  request_id: string | null;
  fingerprint: string;
  delivery_destination: string | null;
  status: RunStatus;
  output: string | null;
  error: string | null;
  attempt: number;
  steps: number;
  usage: string;
  elapsed_ms: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  /** on_busy=steer: the running run this queued turn waits for (docs/agent-loop.md). */
  steer_target?: string | null;
}

export function toRun(row: RunRow): Run {
  return {
    run_id: row.run_id,
    tenant: row.tenant,
    agent: row.agent,
    scope: row.scope,
    source: row.source,
    input: parseJson<JsonObject>(row.input),
    request_id: row.request_id,
    delivery: row.delivery_destination === null ? null : { destination: row.delivery_destination },
    status: row.status,
    output: row.output === null ? null : parseJson<JsonObject>(row.output),
    error: row.error === null ? null : parseJson<RunError>(row.error),
    attempt: row.attempt,
    steps: row.steps,
    usage: parseJson<Usage>(row.usage),
    created_at: iso(row.created_at),
    started_at: isoOrNull(row.started_at),
    finished_at: isoOrNull(row.finished_at),
  };
}

export interface EntryRow {
  run_id: string;
  seq: number;
  attempt: number;
  kind: RunEntry['kind'];
  body: string;
  ts: number;
}

export function toEntry(row: EntryRow): RunEntry {
  return {
    run_id: row.run_id,
    seq: row.seq,
    attempt: row.attempt,
    kind: row.kind,
    body: parseJson(row.body),
    ts: iso(row.ts),
  } as RunEntry;
}

export interface EventRow {
  seq: number;
  ts: number;
  type: string;
  data: string;
}

/**
 * A trace row as its member of the event union: keel wrote every row from a RunEvent (or
 * a store rule's event of the union), so its type names its data's shape.
 */
export function toTraceEvent(row: EventRow): TraceEvent {
  return {
    seq: row.seq,
    ts: iso(row.ts),
    type: row.type,
    data: parseJson<JsonObject>(row.data),
  } as TraceEvent;
}

export interface DeliveryRow {
  delivery_id: string;
  tenant: string;
  run_id: string;
  destination: string;
  status: DeliveryStatus;
  attempt: number;
  idempotency_key: string;
  next_attempt_at: number;
  claim_token_hash: string | null;
  claim_expires_at: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  kind: DeliveryKind;
  call_id: string | null;
  payload: string | null;
}

export function toDelivery(row: DeliveryRow): Delivery {
  return {
    delivery_id: row.delivery_id,
    tenant: row.tenant,
    run_id: row.run_id,
    destination: row.destination,
    status: row.status,
    attempt: row.attempt,
    idempotency_key: row.idempotency_key,
    kind: row.kind,
    call_id: row.call_id,
    next_attempt_at: iso(row.next_attempt_at),
    claim_expires_at: isoOrNull(row.claim_expires_at),
    last_error: row.last_error,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

// A list cursor names the tenant and namespace it was issued for: a cursor carried to
// another namespace or tenant is refused instead of silently paging the wrong list.
interface ListCursor {
  v: 1;
  tenant: string;
  namespace: string;
  after: string;
}

export function encodeListCursor(cursor: ListCursor): string {
  return Buffer.from(JSON.stringify(cursor), 'utf8').toString('base64url');
}

export function decodeListCursor(text: string, tenant: string, namespace: string): string {
  let cursor: Partial<ListCursor> | null = null;
  try {
    cursor = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Partial<ListCursor>;
  } catch {
    cursor = null;
  }
  if (!cursor || cursor.v !== 1 || typeof cursor.after !== 'string') {
    throw new KeelError('VALIDATION_FAILED', 'cursor is not valid', { field: 'cursor' });
  }
  if (cursor.tenant !== tenant || cursor.namespace !== namespace) {
    throw new KeelError(
      'VALIDATION_FAILED',
      'cursor was issued for another tenant or namespace; start again without a cursor',
      { field: 'cursor' },
    );
  }
  return cursor.after;
}

/** A schedule row; `enabled` is 0/1 in SQLite and a boolean in PostgreSQL. */
export interface ScheduleRow {
  tenant: string;
  name: string;
  agent: string;
  scope: string;
  payload: string;
  timing: string;
  misfire: MisfirePolicy;
  delivery_destination: string | null;
  enabled: number | boolean;
  next_fire_at: number | null;
  last_fired_at: number | null;
  last_run_id: string | null;
  last_error: string | null;
  revision: number;
  created_at: number;
  updated_at: number;
}

export function toSchedule(row: ScheduleRow): Schedule {
  const timing = parseJson<ScheduleTiming>(row.timing);
  return {
    tenant: row.tenant,
    name: row.name,
    agent: row.agent,
    scope: row.scope,
    payload: parseJson<JsonObject>(row.payload),
    cron: timing.kind === 'cron' ? timing.cron : null,
    timezone: timing.kind === 'cron' ? timing.timezone : null,
    every_ms: timing.kind === 'every' ? timing.every_ms : null,
    at: timing.kind === 'at' ? timing.at : null,
    misfire: row.misfire,
    delivery: row.delivery_destination === null ? null : { destination: row.delivery_destination },
    enabled: row.enabled === true || row.enabled === 1,
    next_fire_at: isoOrNull(row.next_fire_at),
    last_fired_at: isoOrNull(row.last_fired_at),
    last_run_id: row.last_run_id,
    last_error: row.last_error,
    revision: row.revision,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export const ARTIFACT_STAT_COLUMNS =
  'path, content_type, size_bytes, sha256, metadata, created_at, updated_at';

export interface ArtifactStatRow {
  path: string;
  content_type: string;
  size_bytes: number;
  sha256: string;
  metadata: string;
  created_at: number;
  updated_at: number;
}

export function toArtifactStat(row: ArtifactStatRow): ArtifactStat {
  return {
    path: row.path,
    content_type: row.content_type,
    size_bytes: row.size_bytes,
    sha256: row.sha256,
    metadata: parseJson<JsonObject>(row.metadata),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}
