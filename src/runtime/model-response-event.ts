// The `model.response` event with the provider's raw exchange in it. The exchange comes
// as JSON texts (provider.ts RawExchange: a request body as it was sent); they are
// spliced into the event's stored text instead of being parsed and serialised again.

import type { RawExchange } from '../providers/provider.ts';
import type { RunEvent } from './events.ts';

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

/** `data` as stored: its JSON text with `"raw":{…}` added from the exchange's texts. */
export function modelResponseEvent(
  data: ModelResponseEvent['data'],
  raw: RawExchange | undefined,
): ModelResponseEvent {
  if (raw === undefined) return { type: 'model.response', data };
  const parts: string[] = [];
  if (raw.request !== undefined) parts.push(`"request":${raw.request}`);
  if (raw.response !== undefined) parts.push(`"response":${raw.response}`);
  // `data` is a non-empty object, so its text ends with the closing brace.
  const text = JSON.stringify(data);
  return {
    type: 'model.response',
    data,
    data_json: `${text.slice(0, -1)},"raw":{${parts.join(',')}}}`,
  };
}
