// A fetch that keeps the exact request and response bodies of one model call for the
// trace (`model.response.raw`). The response body is recorded as it streams through to
// the library (no second read; the transport taps it); secrets are removed before
// anything is kept.

import type { ModelTransport } from './node-http-transport.ts';

/** Bodies beyond this are cut in the trace; the call itself is unaffected. */
const MAX_RECORDED_CHARS = 256 * 1024;

export interface RecordedExchange {
  request: string | null;
  response: string;
  status: number | null;
}

export interface RecordingFetch {
  fetch: typeof globalThis.fetch;
  /** What passed through so far (the last request when the library made more than one). */
  recorded(): RecordedExchange;
}

function bodyText(body: unknown): string | null {
  if (body === undefined || body === null) return null;
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return new TextDecoder().decode(body);
  return '[unrecorded body]';
}

/** What a secret is replaced with in a recorded body. */
export const REDACTED = '[redacted]';

export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length > 0) out = out.split(secret).join(REDACTED);
  }
  return out.length > MAX_RECORDED_CHARS
    ? `${out.slice(0, MAX_RECORDED_CHARS)}…[${out.length - MAX_RECORDED_CHARS} more characters]`
    : out;
}

export function createRecordingFetch(
  secrets: readonly string[],
  transport: ModelTransport,
): RecordingFetch {
  const state: RecordedExchange = { request: null, response: '', status: null };
  let chunks: string[] = [];

  const recordingFetch: typeof globalThis.fetch = async (input, init) => {
    state.request = bodyText(init?.body);
    const mine: string[] = [];
    chunks = mine;
    // The transport hands over each body chunk as it passes to the library.
    const response = await transport(input, init, (text) => mine.push(text));
    state.status = response.status;
    return response;
  };

  return {
    fetch: recordingFetch,
    recorded() {
      return {
        request: state.request === null ? null : redact(state.request, secrets),
        response: redact(chunks.join(''), secrets),
        status: state.status,
      };
    },
  };
}
