// The shared trace repository (../repositories/trace.ts) for PostgreSQL code that still
// opens its own transaction: each call runs on that transaction's client.

import type { EntryBody, JsonObject, RunEntry } from '../../types.ts';
import * as trace from '../repositories/trace.ts';
import type { NewEvent } from '../store.ts';
import type { Tx } from './context.ts';
import { Reads } from '../sql/steps.ts';
import { postgresDialect } from './dialect.ts';
import { drive, within } from './steps.ts';

export function appendEvents(
  tx: Tx,
  run: { tenant: string; run_id: string },
  events: readonly NewEvent[],
): Promise<void> {
  return within(tx, (writes) => trace.appendEvents(writes, run, events));
}

export function appendEvent(
  tx: Tx,
  run: { tenant: string; run_id: string },
  type: string,
  data: JsonObject,
): Promise<void> {
  return within(tx, (writes) => trace.appendEvent(writes, run, type, data));
}

export function appendEntries(
  tx: Tx,
  runId: string,
  attempt: number,
  entries: readonly EntryBody[],
): Promise<RunEntry[]> {
  return within(tx, (writes) => trace.appendEntries(writes, runId, attempt, entries));
}

/** Inside the caller's transaction (a fork reads its source's entries in its snapshot). */
export function loadEntries(tx: Tx, runId: string): Promise<RunEntry[]> {
  return drive(tx, trace.loadEntries(new Reads(postgresDialect), runId));
}
