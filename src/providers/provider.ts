// keel's own provider interface (docs/agent-loop.md, Providers): one model response per
// call. Adapters turn keel's entries into their wire format; stored history never
// depends on a library's message type.

import type { AssistantBody, JsonObject, RunEntry, ThreadMessage } from '../types.ts';

export interface ToolDefinition {
  name: string;
  description: string;
  input_schema: JsonObject;
}

export interface ModelRequest {
  /** The model name after the `provider/` prefix. */
  model: string;
  system: string;
  /** Past turns of the thread (user text and final assistant text). */
  context: ThreadMessage[];
  /** This run's entries, in order. */
  entries: RunEntry[];
  tools: ToolDefinition[];
  temperature: number;
  max_tokens: number;
  /** Aborted on cancel, lease loss, run deadline or shutdown. */
  signal: AbortSignal;
  /** Live text chunks while the model streams (not stored). */
  onDelta?: (text: string) => void;
  /**
   * Whether anyone can see `onDelta`'s chunks now (asked as each request goes out). A
   * provider with `stream = "when-watched"` streams only then; absent → nobody watches.
   */
  watched?: () => boolean;
}

export interface ModelResponse {
  assistant: AssistantBody;
  /** Raw request and response bodies for the trace (keys already removed). */
  raw?: RawExchange;
}

/**
 * The exchange as the trace keeps it (`model.response`'s `raw`), each part a JSON text
 * (one JSON value): a request body goes into the event as it was sent, never parsed and
 * serialised again (two ~10 KB requests per turn of the turn bench: ≈ 0.8 ms of CPU).
 */
export interface RawExchange {
  request?: string;
  response?: string;
}

export interface Provider {
  readonly name: string;
  complete(request: ModelRequest): Promise<ModelResponse>;
}

/** Resolves `provider/model` strings to a provider; `fixture` is always present. */
export interface ProviderRegistry {
  resolve(modelRef: string): { provider: Provider; model: string } | null;
}

/**
 * The one error type a provider throws for a failed call. `status` is the HTTP status
 * (null for connection-level failures); `retryable` tells the run loop whether another
 * try can help (429, 5xx, connection reset, timeout).
 */
export class ProviderError extends Error {
  readonly status: number | null;
  readonly retryable: boolean;
  /** The provider's `Retry-After` hint, when it sent one. */
  readonly retryAfterMs: number | null;
  /** The model input was longer than the model's context (docs/compaction.md). */
  readonly contextExceeded: boolean;
  /** No complete answer within the provider's timeout_ms (the run error MODEL_TIMEOUT). */
  readonly timedOut: boolean;

  constructor(
    message: string,
    options: {
      status: number | null;
      retryable?: boolean;
      retryAfterMs?: number | null;
      contextExceeded?: boolean;
      timedOut?: boolean;
    },
  ) {
    super(message);
    this.name = 'ProviderError';
    this.status = options.status;
    this.contextExceeded = options.contextExceeded ?? false;
    this.timedOut = options.timedOut ?? false;
    this.retryable =
      !this.contextExceeded && (options.retryable ?? isRetryableStatus(options.status));
    this.retryAfterMs = options.retryAfterMs ?? null;
  }
}

/**
 * Marks a summarisation request of a compaction (src/runtime/compaction.ts): the system
 * prompt starts with it, so the fixture model can answer it deterministically.
 */
export const SUMMARY_REQUEST_MARKER = '[keel:summarize]';

/**
 * Marks the memory flush request before a compaction (src/runtime/memory-flush.ts): the
 * system prompt starts with it; the fixture model answers with one `memory_put` call.
 */
export const MEMORY_FLUSH_MARKER = '[keel:memory-flush]';

/**
 * 408, 409 (lock timeouts), 429 and every 5xx may pass on retry; other statuses will not.
 * The default of the AI SDK's APICallError.isRetryable, for errors keel raises itself
 * (the fixture model); errors from the SDK carry their own decision (provider-errors.ts).
 */
function isRetryableStatus(status: number | null): boolean {
  if (status === null) return true;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}
