// Trace events and checkpoint entries: append-only rows whose seq continues from the
// run's last one. Every caller has already updated (and so row-locked) the run in the
// same transaction, which serializes appends to one run across processes.

import type { EntryBody, JsonObject, RunEntry, TraceEvent } from '../../types.ts';
import type { NewEvent } from '../store.ts';
import { eventDataText } from '../rules/run-writes.ts';
import type { EntryPage } from '../rules/keyset.ts';
import { runEntriesPageSql, seqPageOf } from '../rules/keyset.ts';
import type { Sql, SqlParam, Tx } from './context.ts';
import type { EntryRow, EventRow } from './rows.ts';
import { toEntry, toTraceEvent } from './rows.ts';

/** Appends trace events in one statement; each is announced after the commit. */
export async function appendEvents(
  tx: Tx,
  run: { tenant: string; run_id: string },
  events: readonly NewEvent[],
): Promise<void> {
  if (events.length === 0) return;
  const rows = await tx.rows<{ seq: number }>(
    `INSERT INTO run_events (run_id, seq, ts, type, data)
     SELECT $1, last.seq + e.n, $2, e.type, e.data
     FROM (SELECT COALESCE(MAX(seq), 0) AS seq FROM run_events WHERE run_id = $1) AS last,
          unnest($3::text[], $4::text[]) WITH ORDINALITY AS e(type, data, n)
     RETURNING seq`,
    [run.run_id, tx.now, events.map((event) => event.type), events.map(eventDataText)],
  );
  for (const { seq } of rows.sort((a, b) => a.seq - b.seq)) {
    tx.changes.push({ kind: 'run.event', tenant: run.tenant, run_id: run.run_id, seq });
  }
}

export async function appendEvent(
  tx: Tx,
  run: { tenant: string; run_id: string },
  type: string,
  data: JsonObject,
): Promise<void> {
  await appendEvents(tx, run, [{ type, data }]);
}

export async function appendEntries(
  tx: Tx,
  runId: string,
  attempt: number,
  entries: readonly EntryBody[],
): Promise<RunEntry[]> {
  if (entries.length === 0) return [];
  const rows = await tx.rows<EntryRow>(
    `INSERT INTO run_entries (run_id, seq, attempt, kind, body, ts)
     SELECT $1, last.seq + e.n, $2, e.kind, e.body, $3
     FROM (SELECT COALESCE(MAX(seq), 0) AS seq FROM run_entries WHERE run_id = $1) AS last,
          unnest($4::text[], $5::text[]) WITH ORDINALITY AS e(kind, body, n)
     RETURNING *`,
    [
      runId,
      attempt,
      tx.now,
      entries.map((entry) => entry.kind),
      entries.map((entry) => JSON.stringify(entry.body)),
    ],
  );
  return rows.map(toEntry).sort((a, b) => a.seq - b.seq);
}

export async function loadEntries(sql: Sql, runId: string): Promise<RunEntry[]> {
  const rows = await sql.rows<EntryRow>(
    'SELECT * FROM run_entries WHERE run_id = $1 ORDER BY seq',
    [runId],
  );
  return rows.map(toEntry);
}

/** One page of the tenant's run's entries after `afterSeq`; null when it has no such run. */
export async function getEntriesPage(
  sql: Sql,
  tenant: string,
  runId: string,
  afterSeq: number,
  limit: number,
): Promise<EntryPage<RunEntry> | null> {
  const exists = await sql.one('SELECT 1 FROM runs WHERE run_id = $1 AND tenant = $2', [
    runId,
    tenant,
  ]);
  if (!exists) return null;
  const params: SqlParam[] = [];
  const text = runEntriesPageSql({ runId, after: afterSeq, limit }, (value) => {
    params.push(value);
    const name = `$${params.length}`;
    return () => name;
  });
  const rows = await sql.rows<EntryRow>(text, params);
  return seqPageOf(rows, limit, toEntry);
}

export async function getTrace(
  sql: Sql,
  tenant: string,
  runId: string,
  afterSeq: number,
  limit: number,
): Promise<TraceEvent[] | null> {
  const exists = await sql.one('SELECT 1 FROM runs WHERE run_id = $1 AND tenant = $2', [
    runId,
    tenant,
  ]);
  if (!exists) return null;
  const rows = await sql.rows<EventRow>(
    'SELECT seq, ts, type, data FROM run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
    [runId, afterSeq, limit],
  );
  return rows.map(toTraceEvent);
}
