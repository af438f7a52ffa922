// A turn (or, later, a due schedule) becomes one queued run in one store transaction.
// The fingerprint lets a replayed request_id prove it is the same request.

import { createHash } from 'node:crypto';
import { stringify as stableStringify } from 'safe-stable-stringify';
import type { EnqueueResult, EnqueueRunInput, RunStore } from '../store/store.ts';
import type { DeliveryRequest, JsonObject, JsonValue, RunSource } from '../types.ts';
import { newRunId } from '../ids.ts';

export interface TurnRequest {
  tenant: string;
  agent: string;
  scope: string;
  payload: JsonObject;
  request_id?: string | null;
  delivery?: DeliveryRequest | null;
  on_busy?: EnqueueRunInput['on_busy'];
  source?: RunSource;
  /** The tenant's queued-run limit, enforced in the store's transaction. */
  max_queued?: number | null;
}

/**
 * JSON with object keys sorted (by UTF-16 code units), so equal values always hash
 * alike. safe-stable-stringify gives byte-for-byte what the hand-written version stored
 * in existing fingerprints (test/fingerprint.test.ts pins one).
 */
export function canonicalJson(value: JsonValue | undefined): string {
  return stableStringify(value ?? null) ?? 'null';
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
