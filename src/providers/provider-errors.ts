// Maps whatever the AI SDK provider layer throws to keel's ProviderError: HTTP errors
// keep their status and the server's message and are retryable when the provider
// package's APICallError says so (408/409/429/5xx, minus what the provider knows will not
// pass: OpenAI's `insufficient_quota`, Anthropic's in-band errors other than
// `overloaded_error`); connection failures are retryable; `retry-after-ms` / `Retry-After` become a delay hint. Aborts pass through
// untouched (the run loop knows why it aborted).

import { APICallError } from '@ai-sdk/provider';
import { ProviderError } from './provider.ts';

/** `retry-after-ms` (OpenAI, milliseconds) wins over `Retry-After` (seconds or a date). */
export function retryAfterMs(
  headers: Record<string, string | undefined> | undefined,
  now: number = Date.now(),
): number | null {
  if (!headers) return null;
  const lower: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers)) lower[name.toLowerCase()] = value;
  const ms = Number(lower['retry-after-ms']);
  if (lower['retry-after-ms'] !== undefined && Number.isFinite(ms) && ms >= 0) return ms;
  const after = lower['retry-after'];
  if (after === undefined) return null;
  const seconds = Number(after);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(after);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

export function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
}

/** The provider's own error message from a JSON error body, when it has one. */
function serverMessage(body: string | undefined): string | null {
  if (!body) return null;
  try {
    const parsed = JSON.parse(body) as {
      error?: { message?: unknown } | string;
      message?: unknown;
    };
    if (typeof parsed.error === 'string') return parsed.error;
    if (typeof parsed.error?.message === 'string') return parsed.error.message;
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // not JSON: fall through to the library's message
  }
  return null;
}

/**
 * "The input is longer than the model's context", as OpenAI (`context_length_exceeded`,
 * "maximum context length"), Anthropic ("prompt is too long"), vLLM, llama.cpp
 * ("exceeds the available context size") and Ollama word it: one typed code for all.
 */
const CONTEXT_EXCEEDED_TEXT =
  /context[_ ]length[_ ]exceeded|maximum context length|prompt is too long|exceeds? the (?:available )?context|context window (?:is )?exceeded|too many (?:input )?tokens/i;

export function isContextExceeded(status: number | null, text: string): boolean {
  return (status === null || status === 400 || status === 413) && CONTEXT_EXCEEDED_TEXT.test(text);
}

export function toProviderError(error: unknown): ProviderError {
  if (error instanceof ProviderError) return error;
  if (APICallError.isInstance(error)) {
    const status = error.statusCode ?? null;
    // A 200 that broke mid-stream (socket closed) is retryable although 200 is not.
    const httpError = status !== null && status >= 400;
    const message = serverMessage(error.responseBody) ?? error.message;
    return new ProviderError(message, {
      status: httpError ? status : null,
      retryable: httpError ? error.isRetryable : true,
      retryAfterMs: retryAfterMs(error.responseHeaders),
      contextExceeded:
        httpError && isContextExceeded(status, `${message} ${error.responseBody ?? ''}`),
    });
  }
  // In-band stream errors arrive as the provider's plain object ({message} or
  // {type, message}); anything else is a connection-level or parse failure. Both may
  // pass on another try.
  const message =
    error instanceof Error
      ? error.message
      : typeof (error as { message?: unknown } | null)?.message === 'string'
        ? (error as { message: string }).message
        : JSON.stringify(error);
  return new ProviderError(message, { status: null, retryable: true });
}
