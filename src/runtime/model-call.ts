// One model step: a provider call with the run's abort signal, transient errors retried
// with exponential backoff (honouring Retry-After), then PROVIDER_ERROR (MODEL_TIMEOUT
// when the last try ran past the provider's timeout_ms).

import { z } from 'zod';
import type { Metrics } from '../metrics.ts';
import type { ModelRequest, ModelResponse, Provider } from '../providers/provider.ts';
import { ProviderError } from '../providers/provider.ts';
import type { RunError } from '../types.ts';
import type { RunEvent } from '../events.ts';
import { isRawExchange } from './model-response-event.ts';
import type { RunControl } from './run-control.ts';
import { sleepUnlessAborted } from './run-control.ts';

export interface RetryPolicy {
  /** Retries after the first try (docs/reliability.md: "up to 3 times"). */
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 3,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
};

type ModelCallResult =
  | { kind: 'response'; response: ModelResponse; latencyMs: number }
  | { kind: 'failed'; error: RunError }
  | { kind: 'stopped' };

interface RetryNotice {
  attempt: number;
  delayMs: number;
  error: RunError;
}

interface ModelCallInput {
  provider: Provider;
  request: Omit<ModelRequest, 'signal'>;
  control: RunControl;
  policy: RetryPolicy;
  metrics: Metrics;
  now: () => number;
  /** Records the retry (a trace event) before the backoff sleep. */
  onRetry: (notice: RetryNotice) => Promise<void>;
}

/** What a loop's model call needs from its run: control, retry policy, clock, journal. */
export interface LoopCallDeps {
  control: RunControl;
  retry?: RetryPolicy;
  metrics: Metrics;
  now: () => number;
  checkpoint(entries: [], events: RunEvent[]): Promise<void>;
}

/**
 * The options every model call of a run shares (a step's, a compaction's summary, a
 * memory flush): the run's control and retry policy, each retry journaled as a
 * `model.retry` event of `step` before its backoff.
 */
export function loopCallOptions(
  deps: LoopCallDeps,
  step: number,
): Pick<ModelCallInput, 'control' | 'policy' | 'metrics' | 'now' | 'onRetry'> {
  return {
    control: deps.control,
    policy: deps.retry ?? DEFAULT_RETRY_POLICY,
    metrics: deps.metrics,
    now: deps.now,
    onRetry: ({ attempt, delayMs, error }) =>
      deps.checkpoint(
        [],
        [{ type: 'model.retry', data: { step, attempt, delay_ms: delayMs, error } }],
      ),
  };
}

function describe(
  provider: Provider,
  error: unknown,
): { error: RunError; retryable: boolean; retryAfterMs: number | null } {
  if (error instanceof ProviderError) {
    const status = error.status === null ? 'no status' : `status ${error.status}`;
    const code = error.contextExceeded
      ? 'CONTEXT_EXCEEDED'
      : error.timedOut
        ? 'MODEL_TIMEOUT'
        : 'PROVIDER_ERROR';
    const message = error.timedOut ? error.message : `${status}: ${error.message}`;
    return {
      error: { code, message: `${provider.name}: ${message}` },
      retryable: error.retryable,
      retryAfterMs: error.retryAfterMs,
    };
  }
  // An adapter that throws something else hit a connection-level problem (reset,
  // timeout, DNS): transient by nature, so it is retried like a 5xx.
  const message = error instanceof Error ? error.message : String(error);
  return {
    error: { code: 'PROVIDER_ERROR', message: `${provider.name}: ${message}` },
    retryable: true,
    retryAfterMs: null,
  };
}

/** What the loop relies on in a response; anything else is the provider's fault. */
const assistantShape = z.object({
  text: z.string(),
  tool_calls: z.array(z.object({ call_id: z.string(), name: z.string(), arguments: z.string() })),
  usage: z.object({
    input_tokens: z.number().int().nonnegative(),
    output_tokens: z.number().int().nonnegative(),
  }),
  finish_reason: z.string(),
  model: z.string(),
});

/**
 * A response the loop could not record or reason about (missing fields, non-string
 * arguments) fails the step as PROVIDER_ERROR instead of throwing later, inside the
 * attempt. A raw exchange whose parts are not strings is dropped; that each string is one
 * JSON text is the provider's contract (provider.ts RawExchange), not checked here.
 */
function malformation(response: ModelResponse): string | null {
  const checked = assistantShape.safeParse(response.assistant);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    return `${issue?.path.map(String).join('.') ?? ''}: ${issue?.message ?? 'invalid'}`;
  }
  const raw = response.raw;
  if (raw !== undefined && !isRawExchange(raw)) delete response.raw;
  return null;
}

export async function callModel(input: ModelCallInput): Promise<ModelCallResult> {
  const { provider, control, policy, metrics, now } = input;
  for (let attempt = 0; ; attempt++) {
    if (control.stopped) return { kind: 'stopped' };
    const started = now();
    try {
      const response = await provider.complete({ ...input.request, signal: control.modelSignal });
      const latencyMs = now() - started;
      const malformed = malformation(response);
      if (malformed !== null) {
        metrics.modelCallDuration.observe({ outcome: 'error' }, latencyMs / 1000);
        const message = `${provider.name}: the response is malformed (${malformed})`;
        return { kind: 'failed', error: { code: 'PROVIDER_ERROR', message } };
      }
      metrics.modelCallDuration.observe({ outcome: 'ok' }, latencyMs / 1000);
      // A response that raced an abort is still a response; the caller decides whether
      // the run may record it (control.stopped is checked before every write).
      return { kind: 'response', response, latencyMs };
    } catch (error) {
      const seconds = (now() - started) / 1000;
      if (control.stopped) {
        metrics.modelCallDuration.observe({ outcome: 'aborted' }, seconds);
        return { kind: 'stopped' };
      }
      metrics.modelCallDuration.observe({ outcome: 'error' }, seconds);
      const failure = describe(provider, error);
      if (!failure.retryable || attempt >= policy.maxRetries) {
        return { kind: 'failed', error: failure.error };
      }
      const backoff = policy.baseDelayMs * 2 ** attempt;
      const delayMs = Math.min(policy.maxDelayMs, Math.max(backoff, failure.retryAfterMs ?? 0));
      await input.onRetry({ attempt: attempt + 1, delayMs, error: failure.error });
      if (!(await sleepUnlessAborted(delayMs, control.modelSignal))) return { kind: 'stopped' };
    }
  }
}
