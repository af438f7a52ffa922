// Trace events and checkpoint entries of a run: append-only rows whose seq continues
// from the run's last one, so appending costs the same however long the run already is.

import type { EntryBody, JsonObject, RunEntry, TraceEvent } from '../../types.ts';
import { eventDataText } from '../rules/run-writes.ts';
import type { EntryPage, KeysetValue } from '../rules/keyset.ts';
import { runEntriesPageSql, seqPageOf } from '../rules/keyset.ts';
import type { NewEvent, StoreChange } from '../store.ts';
import type { StoreContext } from './context.ts';
import { boundLimit } from './statements.ts';
import type { EntryRow, EventRow } from './rows.ts';
import { toEntry, toTraceEvent } from './rows.ts';

function nextSeq(ctx: StoreContext, table: 'run_events' | 'run_entries', runId: string): number {
  const row = ctx
    .sql(`SELECT COALESCE(MAX(seq), 0) AS last FROM ${table} WHERE run_id = ?`)
    .get(runId) as { last: number };
  return row.last + 1;
}

/** Appends one trace event inside the caller's transaction; announced after commit. */
export function appendEvent(
  ctx: StoreContext,
  changes: StoreChange[],
  run: { tenant: string; run_id: string },
  type: string,
  data: JsonObject,
  ts: number = ctx.now(),
): number {
  return insertEvent(ctx, changes, run, type, JSON.stringify(data), ts);
}

/** Appends events in order, each stored as eventDataText says (its raw JSON spliced in). */
export function appendEvents(
  ctx: StoreContext,
  changes: StoreChange[],
  run: { tenant: string; run_id: string },
  events: readonly NewEvent[],
  ts: number,
): void {
  for (const event of events) insertEvent(ctx, changes, run, event.type, eventDataText(event), ts);
}

function insertEvent(
  ctx: StoreContext,
  changes: StoreChange[],
  run: { tenant: string; run_id: string },
  type: string,
  dataText: string,
  ts: number,
): number {
  const seq = nextSeq(ctx, 'run_events', run.run_id);
  ctx
    .sql('INSERT INTO run_events (run_id, seq, ts, type, data) VALUES (?, ?, ?, ?, ?)')
    .run(run.run_id, seq, ts, type, dataText);
  changes.push({ kind: 'run.event', tenant: run.tenant, run_id: run.run_id, seq });
  return seq;
}

export function appendEntries(
  ctx: StoreContext,
  runId: string,
  attempt: number,
  entries: readonly EntryBody[],
  ts: number,
): RunEntry[] {
  let seq = nextSeq(ctx, 'run_entries', runId);
  const insert = ctx.sql(
    'INSERT INTO run_entries (run_id, seq, attempt, kind, body, ts) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const stored: RunEntry[] = [];
  const iso = ctx.isoTime(ts);
  for (const entry of entries) {
    insert.run(runId, seq, attempt, entry.kind, JSON.stringify(entry.body), ts);
    // A literal, not `{ ...entry, run_id, … }`: V8 takes a slow path for a spread with
    // added properties (µs per object, a tenth of a checkpoint round; bench/checkpoint).
    stored.push({
      run_id: runId,
      seq,
      attempt,
      kind: entry.kind,
      body: entry.body,
      ts: iso,
    } as RunEntry);
    seq += 1;
  }
  return stored;
}

export function loadEntries(ctx: StoreContext, runId: string): RunEntry[] {
  const rows = ctx
    .sql(
      'SELECT run_id, seq, attempt, kind, body, ts FROM run_entries WHERE run_id = ? ORDER BY seq',
    )
    .all(runId) as EntryRow[];
  return rows.map(toEntry);
}

/** One page of the tenant's run's entries after `afterSeq`; null when it has no such run. */
export function getEntriesPage(
  ctx: StoreContext,
  tenant: string,
  runId: string,
  afterSeq: number,
  limit: number,
): EntryPage<RunEntry> | null {
  const exists = ctx.sql('SELECT 1 FROM runs WHERE run_id = ? AND tenant = ?').get(runId, tenant);
  if (!exists) return null;
  const params: KeysetValue[] = [];
  const text = runEntriesPageSql(
    { runId, after: afterSeq, limit },
    (value) => () => {
      params.push(value);
      return '?';
    },
    boundLimit,
  );
  const rows = ctx.sql(text).all(...params) as EntryRow[];
  return seqPageOf(rows, limit, toEntry);
}

export function getTrace(
  ctx: StoreContext,
  tenant: string,
  runId: string,
  afterSeq: number,
  limit: number,
): TraceEvent[] | null {
  const exists = ctx.sql('SELECT 1 FROM runs WHERE run_id = ? AND tenant = ?').get(runId, tenant);
  if (!exists) return null;
  const rows = ctx
    .sql(
      'SELECT seq, ts, type, data FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT CAST(? AS INTEGER)',
    )
    .all(runId, afterSeq, limit) as EventRow[];
  return rows.map(toTraceEvent);
}
