// The `model.response` event with the provider's raw exchange in it. The exchange comes
// as JSON texts (provider.ts RawExchange: a request body as it was sent); the event
// carries them as one JSON text that the store splices into the stored data as `raw`
// (store/rules/run-writes.ts eventDataText), instead of parsing and serialising them.

import type { RawExchange } from '../providers/provider.ts';
import type { RunEvent } from '../events.ts';

type ModelResponseEvent = Extract<RunEvent, { type: 'model.response' }>;

/** A raw exchange as providers must give it: each part absent or a string. */
export function isRawExchange(value: unknown): value is RawExchange {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { request, response } = value as Record<string, unknown>;
  return (
    (request === undefined || typeof request === 'string') &&
    (response === undefined || typeof response === 'string')
  );
}

/** The event; `raw_json` is `{"request":…,"response":…}` built from the exchange's texts. */
export function modelResponseEvent(
  data: ModelResponseEvent['data'],
  raw: RawExchange | undefined,
): ModelResponseEvent {
  if (raw === undefined) return { type: 'model.response', data };
  const parts: string[] = [];
  if (raw.request !== undefined) parts.push(`"request":${raw.request}`);
  if (raw.response !== undefined) parts.push(`"response":${raw.response}`);
  return { type: 'model.response', data, raw_json: `{${parts.join(',')}}` };
}
