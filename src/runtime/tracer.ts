// The run loop's tracing port (docs/telemetry.md). The loop reports where a run attempt
// is — a model call, a tool call, the end — and the tracer turns that into spans; the
// loop never sees a span. `noopTracer` is what runs when no exporter is configured: it
// stamps nothing and allocates nothing. src/telemetry/otel-tracer.ts is the OpenTelemetry
// implementation, loaded only when `[telemetry] otlp_endpoint` is set.

import type { Agent, AssistantBody, Run, RunError, RunFigures, ToolResultBody } from '../types.ts';
import type { RunEvent } from '../events.ts';

/** How a model call ended (model-call.ts's result, minus what tracing does not need). */
export type ModelCallEnd =
  | { kind: 'response'; assistant: AssistantBody }
  | { kind: 'failed'; error: RunError }
  | { kind: 'stopped' };

/** How an attempt ended: a run outcome, or a stop that leaves the run to a later attempt. */
export type AttemptEnd =
  | { status: 'succeeded' }
  | { status: 'failed'; error: RunError }
  | { status: 'stopped'; cause: string };

/** The trace of one run attempt; every method is synchronous and never throws. */
export interface AttemptTrace {
  /** A model call of `step` starts (before its `model.request` is journaled). */
  modelStarted(step: number, call: { provider: string; model: string; agent: Agent }): void;
  modelEnded(end: ModelCallEnd): void;
  /** A tool call of `step` is about to run (before its `tool.call` is journaled). */
  toolStarted(step: number, call: { call_id: string; name: string; effect: string }): void;
  toolEnded(result: ToolResultBody): void;
  /** The events with `trace_id` and `span_id` added to their data (copies); as is when off. */
  stamp(events: RunEvent[]): RunEvent[];
  /** The attempt is over; a final outcome also ends the run's span. */
  ended(end: AttemptEnd, figures: RunFigures): void;
}

export interface RunTracer {
  /** The trace of a claimed attempt; an attempt of a resumed run continues its trace. */
  attempt(run: Run, agent: Agent): AttemptTrace;
  /** Exports what is still buffered and stops exporting (keel's shutdown). */
  shutdown(): Promise<void>;
}

const noopAttempt: AttemptTrace = {
  modelStarted: () => undefined,
  modelEnded: () => undefined,
  toolStarted: () => undefined,
  toolEnded: () => undefined,
  stamp: (events) => events,
  ended: () => undefined,
};

export const noopTracer: RunTracer = {
  attempt: () => noopAttempt,
  shutdown: () => Promise.resolve(),
};
