// Trace events and checkpoint entries of a run, for both backends: append-only rows whose
// seq continues from the run's last one, so appending costs the same however long the run
// already is. Every writer has already changed (and so, on PostgreSQL, row-locked) the run
// in the same transaction, which makes appends to one run take turns across processes.

import type { EntryBody, JsonObject, RunEntry, TraceEvent } from '../../types.ts';
import type { EntryPage } from '../rules/keyset.ts';
import { seqPageOf } from '../rules/keyset.ts';
import { eventDataText } from '../rules/run-writes.ts';
import type { EntryRow, EventRow } from '../rows.ts';
import { iso, toEntry, toTraceEvent } from '../rows.ts';
import type { NewEvent } from '../store.ts';
import type { NumberedInsert, NumberedTable } from '../sql/dialect.ts';
import { limitOf, sql } from '../sql/query.ts';
import type { Op, Reads, Writes } from '../sql/steps.ts';

const EVENTS: NumberedTable = { table: 'run_events', shared: ['ts'], columns: ['type', 'data'] };
const ENTRIES: NumberedTable = {
  table: 'run_entries',
  shared: ['attempt', 'ts'],
  columns: ['kind', 'body'],
};

/** The seqs the rows were given, in the order of the rows. */
function* appendNumbered(tx: Writes, insert: NumberedInsert): Op<number[]> {
  const first = yield* tx.dialect.appendNumbered(insert);
  return insert.rows.map((_, index) => first + index);
}

/** Appends events in order (each as eventDataText stores it), announced after the commit. */
export function* appendEvents(
  tx: Writes,
  run: { tenant: string; run_id: string },
  events: readonly NewEvent[],
): Op<void> {
  if (events.length === 0) return;
  const seqs = yield* appendNumbered(tx, {
    into: EVENTS,
    runId: run.run_id,
    shared: [tx.now],
    rows: events.map((event) => [event.type, eventDataText(event)]),
  });
  for (const seq of seqs) {
    tx.changes.push({ kind: 'run.event', tenant: run.tenant, run_id: run.run_id, seq });
  }
}

export function appendEvent(
  tx: Writes,
  run: { tenant: string; run_id: string },
  type: string,
  data: JsonObject,
): Op<void> {
  return appendEvents(tx, run, [{ type, data }]);
}

/** Appends checkpoint entries of the run's current attempt; the entries as stored. */
export function* appendEntries(
  tx: Writes,
  runId: string,
  attempt: number,
  entries: readonly EntryBody[],
): Op<RunEntry[]> {
  if (entries.length === 0) return [];
  const seqs = yield* appendNumbered(tx, {
    into: ENTRIES,
    runId,
    shared: [attempt, tx.now],
    rows: entries.map((entry) => [entry.kind, JSON.stringify(entry.body)]),
  });
  const ts = iso(tx.now);
  // Built from what was written, not read back: parsing a body again costs as much as
  // writing it. A literal, not `{ ...entry, run_id, … }`: V8 takes a slow path for a
  // spread with added properties (µs per object; bench/checkpoint).
  return entries.map(
    (entry, index) =>
      ({
        run_id: runId,
        seq: seqs[index] as number,
        attempt,
        kind: entry.kind,
        body: entry.body,
        ts,
      }) as RunEntry,
  );
}

export function* loadEntries(db: Reads, runId: string): Op<RunEntry[]> {
  const rows = yield* db.rows<EntryRow>(
    sql`SELECT run_id, seq, attempt, kind, body, ts FROM run_entries WHERE run_id = ${runId}
        ORDER BY seq`,
  );
  return rows.map(toEntry);
}

function* runExists(db: Reads, tenant: string, runId: string): Op<boolean> {
  return (
    (yield* db.one(
      sql`SELECT 1 AS found FROM runs WHERE run_id = ${runId} AND tenant = ${tenant}`,
    )) !== undefined
  );
}

/** One page of the tenant's run's entries after `afterSeq`; null when it has no such run. */
export function* getEntriesPage(
  db: Reads,
  tenant: string,
  runId: string,
  afterSeq: number,
  limit: number,
): Op<EntryPage<RunEntry> | null> {
  if (!(yield* runExists(db, tenant, runId))) return null;
  const rows = yield* db.rows<EntryRow>(
    sql`SELECT run_id, seq, attempt, kind, body, ts FROM run_entries WHERE run_id = ${runId}
          AND seq > ${afterSeq} ORDER BY seq LIMIT ${limitOf(limit + 1)}`,
  );
  return seqPageOf(rows, limit, toEntry);
}

/** The run's trace events after `afterSeq`; null when the tenant has no such run. */
export function* getTrace(
  db: Reads,
  tenant: string,
  runId: string,
  afterSeq: number,
  limit: number,
): Op<TraceEvent[] | null> {
  if (!(yield* runExists(db, tenant, runId))) return null;
  const rows = yield* db.rows<EventRow>(
    sql`SELECT seq, ts, type, data FROM run_events WHERE run_id = ${runId} AND seq > ${afterSeq}
        ORDER BY seq LIMIT ${limitOf(limit)}`,
  );
  return rows.map(toTraceEvent);
}
