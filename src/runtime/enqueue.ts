// A turn (or, later, a due schedule) becomes one queued run in one store transaction.
// The fingerprint lets a replayed request_id prove it is the same request.

import { createHash } from 'node:crypto';
import type { EnqueueResult, RunStore } from '../store/store.ts';
import type { DeliveryRequest, JsonObject, JsonValue, RunSource } from '../types.ts';
import { newRunId } from '../ids.ts';

export interface TurnRequest {
  tenant: string;
  agent: string;
  scope: string;
  payload: JsonObject;
  request_id?: string | null;
  delivery?: DeliveryRequest | null;
  on_busy?: 'enqueue' | 'reject';
  source?: RunSource;
  /** The tenant's queued-run limit, enforced in the store's transaction. */
  max_queued?: number | null;
}

/** JSON with object keys sorted, so equal values always hash alike. */
export function canonicalJson(value: JsonValue | undefined): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`;
}

export function turnFingerprint(turn: TurnRequest): string {
  const material = canonicalJson({
    agent: turn.agent,
    scope: turn.scope,
    payload: turn.payload,
    delivery: turn.delivery ? { destination: turn.delivery.destination } : null,
  });
  return createHash('sha256').update(material).digest('hex');
}

export async function enqueueTurn(store: RunStore, turn: TurnRequest): Promise<EnqueueResult> {
  return store.enqueueRun({
    run_id: newRunId(),
    tenant: turn.tenant,
    agent: turn.agent,
    scope: turn.scope,
    source: turn.source ?? 'api',
    input: turn.payload,
    request_id: turn.request_id ?? null,
    fingerprint: turnFingerprint(turn),
    delivery: turn.delivery ?? null,
    on_busy: turn.on_busy ?? 'enqueue',
    max_queued: turn.max_queued ?? null,
  });
}
