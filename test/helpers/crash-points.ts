// Plumbing of the kill tests at the store's own fault points (crash-points.test.ts): one
// life of `keel serve` that must die by SIGKILL at a named point, the figures those tests
// print, and small HTTP readers over the restarted process.

import { serve } from './crash-harness.ts';
import { TENANT, call } from './crash-harness.ts';
import { settledWithin, waitFor } from './wait-for.ts';

/** The figures line of the point tests; every one but `kills` must end 0. */
export interface PointFigures {
  points: Set<string>;
  kills: number;
  /** A turn, fire or delivery that should exist after the restart and does not. */
  lost: number;
  /** More than one run per request id / fire, or more than one delivery row per run. */
  duplicated: number;
  /** An ack accepted with a token that is no longer the claim's, or twice. */
  stale_acks: number;
  /** Something half-written: a run without its commit's parts, or a cancel that wrote. */
  partial: number;
}

export function emptyPointFigures(): PointFigures {
  return { points: new Set(), kills: 0, lost: 0, duplicated: 0, stale_acks: 0, partial: 0 };
}

/** Only for waiting that something does NOT happen; anything else waits on a condition. */
export { setTimeout as sleep } from 'node:timers/promises';

/**
 * One life of `keel serve` on `dataDir` with `point=hit*kill`: `act` drives it up to the
 * request the kill interrupts; this returns once the process has died by SIGKILL.
 */
export async function lifeKilledAt(
  dataDir: string,
  fault: { point: string; hit: number },
  env: Record<string, string>,
  act: (url: string) => Promise<void>,
): Promise<void> {
  const doomed = await serve(dataDir, {
    ...env,
    KEEL_TEST_FAILPOINTS: '1',
    KEEL_FAILPOINTS: `${fault.point}=${fault.hit}*kill`,
  });
  try {
    await act(doomed.url);
    const exit = await settledWithin(doomed.exited, 20_000);
    if (exit?.signal !== 'SIGKILL') throw new Error(`${fault.point}=${fault.hit}*kill never fired`);
  } finally {
    await doomed.kill();
  }
}

/** Sends a request the kill must interrupt: the client gets no answer at all. */
export async function unanswered(url: string, method: string, path: string, body?: unknown) {
  const answered = await call(url, method, path, body).then(
    (response: { status: number }) => response.status,
    () => null,
  );
  if (answered !== null) throw new Error(`${method} ${path} was answered ${answered}`);
}

export interface TraceEventOnWire {
  type: string;
  data: Record<string, unknown>;
}

export async function traceOf(url: string, runId: string): Promise<TraceEventOnWire[]> {
  const trace = await call(url, 'GET', `/v1/tenants/${TENANT}/runs/${runId}/trace`);
  return trace.body.events as TraceEventOnWire[];
}

/** Polls the run's trace until `found` holds (10 s at most). */
export async function untilTrace(
  url: string,
  runId: string,
  found: (events: TraceEventOnWire[]) => boolean,
  what: string,
): Promise<TraceEventOnWire[]> {
  return waitFor(`${runId}: ${what}`, async () => {
    const events = await traceOf(url, runId);
    return found(events) ? events : null;
  });
}

export interface DeliveryOnWire {
  delivery_id: string;
  run_id: string;
  status: string;
  attempt: number;
  claim_expires_at: string | null;
}

export async function deliveriesOf(url: string, runId: string): Promise<DeliveryOnWire[]> {
  const listed = await call(url, 'GET', `/v1/tenants/${TENANT}/deliveries?run_id=${runId}`);
  return listed.body.deliveries as DeliveryOnWire[];
}
