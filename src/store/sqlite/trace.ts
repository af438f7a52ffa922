// The shared trace repository (../repositories/trace.ts) for SQLite code that still opens
// its own write: each call runs inside that write, with its clock reading and changes.

import type { EntryBody, JsonObject, RunEntry } from '../../types.ts';
import * as trace from '../repositories/trace.ts';
import type { NewEvent, StoreChange } from '../store.ts';
import type { StoreContext } from './context.ts';
import { read, within } from './steps.ts';

export function appendEvent(
  ctx: StoreContext,
  changes: StoreChange[],
  run: { tenant: string; run_id: string },
  type: string,
  data: JsonObject,
  now: number = ctx.now(),
): void {
  within(ctx, (tx) => trace.appendEvent(tx, run, type, data), { now, changes });
}

export function appendEvents(
  ctx: StoreContext,
  changes: StoreChange[],
  run: { tenant: string; run_id: string },
  events: readonly NewEvent[],
  now: number,
): void {
  within(ctx, (tx) => trace.appendEvents(tx, run, events), { now, changes });
}

export function appendEntries(
  ctx: StoreContext,
  runId: string,
  attempt: number,
  entries: readonly EntryBody[],
  now: number,
): RunEntry[] {
  return within(ctx, (tx) => trace.appendEntries(tx, runId, attempt, entries), {
    now,
    changes: [],
  });
}

export function loadEntries(ctx: StoreContext, runId: string): RunEntry[] {
  return read(ctx, (db) => trace.loadEntries(db, runId));
}
