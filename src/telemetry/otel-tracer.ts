// The OpenTelemetry run tracer (docs/telemetry.md): spans per run, step, model call and
// tool call with the GenAI semantic conventions' `gen_ai.*` attributes, exported over
// OTLP/HTTP (JSON) in batches. Loaded only when `[telemetry] otlp_endpoint` is set
// (load.ts), so a keel without an endpoint never imports the SDK.
//
// Structure of one run's trace:
//   invoke_agent <agent>            the run span: ids derived from the run id (trace-ids.ts),
//     step <n>                      one per step and attempt (a resumed step gets a new one)
//       chat <model>                the model call of the step, retries included
//       execute_tool <tool>         each tool call the step ran
// Child spans name the run span as parent by its derived id, so the run span itself is
// created — with the run's creation time as start — only when an attempt reaches the
// run's outcome. An attempt killed mid-run leaves its ended spans exported and its open
// ones lost; the next attempt continues under the same run span.
//
// No message content leaves the process: no prompts, answers, tool arguments or results,
// only names, ids, counts and error codes (docs/threat-model.md).

import type { Attributes, Context, Span, Tracer } from '@opentelemetry/api';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { IdGenerator } from '@opentelemetry/sdk-trace-base';
import {
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  RandomIdGenerator,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { TelemetrySettings } from '../config.ts';
import type { RunEvent } from '../events.ts';
import type { AttemptEnd, AttemptTrace, ModelCallEnd, RunTracer } from '../runtime/tracer.ts';
import type { Agent, Run, RunError, RunFigures, ToolResultBody } from '../types.ts';
import { runSpanId, runTraceId } from './trace-ids.ts';

/**
 * Random ids, except while `next` is set: around the one synchronous startSpan of the
 * run span, whose ids are derived from the run id (nothing else can start in between).
 */
class RunIdGenerator implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  next: { traceId: string; spanId: string } | null = null;

  generateTraceId(): string {
    return this.next?.traceId ?? this.random.generateTraceId();
  }

  generateSpanId(): string {
    return this.next?.spanId ?? this.random.generateSpanId();
  }
}

interface OpenSpan {
  span: Span;
  id: string;
}

function open(span: Span): OpenSpan {
  return { span, id: span.spanContext().spanId };
}

function fail(span: Span, error: RunError | { code: string }): void {
  // The code only: error messages can quote what a model or a tool said.
  span.setAttribute('error.type', error.code);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error.code });
}

class OtelAttemptTrace implements AttemptTrace {
  private readonly traceId: string;
  private readonly runSpanId: string;
  private readonly parent: Context;
  private step: (OpenSpan & { n: number; context: Context }) | null = null;
  private model: OpenSpan | null = null;
  private readonly tools = new Map<string, OpenSpan>();

  constructor(
    private readonly tracer: Tracer,
    private readonly ids: RunIdGenerator,
    private readonly run: Run,
    private readonly agent: Agent,
  ) {
    this.traceId = runTraceId(run.run_id);
    this.runSpanId = runSpanId(run.run_id);
    this.parent = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: this.traceId,
      spanId: this.runSpanId,
      traceFlags: TraceFlags.SAMPLED,
    });
  }

  private stepContext(n: number): Context {
    if (this.step?.n === n) return this.step.context;
    this.endStep();
    const span = this.tracer.startSpan(
      `step ${n}`,
      {
        attributes: {
          'keel.run_id': this.run.run_id,
          'keel.step': n,
          'keel.attempt': this.run.attempt,
        },
      },
      this.parent,
    );
    this.step = { ...open(span), n, context: trace.setSpan(this.parent, span) };
    return this.step.context;
  }

  private endStep(): void {
    this.model?.span.end();
    this.model = null;
    for (const tool of this.tools.values()) tool.span.end();
    this.tools.clear();
    this.step?.span.end();
    this.step = null;
  }

  modelStarted(step: number, call: { provider: string; model: string; agent: Agent }): void {
    const attributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': call.provider,
      'gen_ai.system': call.provider,
      'gen_ai.request.model': call.model,
      'gen_ai.request.temperature': call.agent.temperature,
      'gen_ai.request.max_tokens': call.agent.max_tokens,
      'keel.step': step,
    };
    const context = this.stepContext(step);
    const span = this.tracer.startSpan(
      `chat ${call.model}`,
      { kind: SpanKind.CLIENT, attributes },
      context,
    );
    this.model?.span.end();
    this.model = open(span);
  }

  modelEnded(end: ModelCallEnd): void {
    const span = this.model?.span;
    if (!span) return;
    if (end.kind === 'response') {
      const { assistant } = end;
      span.setAttributes({
        'gen_ai.response.model': assistant.model,
        'gen_ai.response.finish_reasons': [assistant.finish_reason],
        'gen_ai.usage.input_tokens': assistant.usage.input_tokens,
        'gen_ai.usage.output_tokens': assistant.usage.output_tokens,
        'keel.tool_calls': assistant.tool_calls.length,
      });
    } else if (end.kind === 'failed') fail(span, end.error);
    else span.setAttribute('keel.stopped', true);
    // Ended now; the id stays for the `model.response` event journaled next.
    span.end();
  }

  toolStarted(step: number, call: { call_id: string; name: string; effect: string }): void {
    const context = this.stepContext(step);
    const span = this.tracer.startSpan(
      `execute_tool ${call.name}`,
      {
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': call.name,
          'gen_ai.tool.call.id': call.call_id,
          'gen_ai.tool.type': 'function',
          'keel.tool.effect': call.effect,
          'keel.step': step,
        },
      },
      context,
    );
    this.tools.set(call.call_id, open(span));
  }

  toolEnded(result: ToolResultBody): void {
    const span = this.tools.get(result.call_id)?.span;
    if (!span) return;
    if (!result.ok && result.error) fail(span, result.error);
    span.end();
  }

  stamp(events: RunEvent[]): RunEvent[] {
    return events.map((event) => {
      const spanId = this.spanIdFor(event);
      return { ...event, data: { ...event.data, trace_id: this.traceId, span_id: spanId } };
    }) as RunEvent[];
  }

  private spanIdFor(event: RunEvent): string {
    const inner = this.step?.id ?? this.runSpanId;
    if (event.type.startsWith('model.')) return this.model?.id ?? inner;
    if (event.type === 'tool.call' || event.type === 'tool.result') {
      return this.tools.get(event.data.call_id)?.id ?? inner;
    }
    return inner;
  }

  ended(end: AttemptEnd, figures: RunFigures): void {
    this.endStep();
    // A stop leaves the run to a later attempt (or to the canceller): its span stays open.
    if (end.status === 'stopped' && end.cause !== 'cancelled') return;
    this.ids.next = { traceId: this.traceId, spanId: this.runSpanId };
    const created = Date.parse(this.run.created_at);
    let span: Span;
    try {
      span = this.tracer.startSpan(`invoke_agent ${this.run.agent}`, {
        root: true,
        ...(Number.isFinite(created) && { startTime: created }),
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': this.run.agent,
          'gen_ai.conversation.id': this.run.scope,
          'gen_ai.request.model': this.agent.model,
          'gen_ai.usage.input_tokens': figures.usage.input_tokens,
          'gen_ai.usage.output_tokens': figures.usage.output_tokens,
          'keel.run_id': this.run.run_id,
          'keel.tenant': this.run.tenant,
          'keel.attempts': this.run.attempt,
          'keel.steps': figures.steps,
          'keel.run.status': end.status === 'stopped' ? 'cancelled' : end.status,
        },
      });
    } finally {
      this.ids.next = null;
    }
    if (end.status === 'failed') fail(span, end.error);
    span.end();
  }
}

export interface OtelTracerSettings extends TelemetrySettings {
  otlp_endpoint: string;
}

export function createOtelTracer(settings: OtelTracerSettings): RunTracer {
  const ids = new RunIdGenerator();
  const exporter = new OTLPTraceExporter({
    url: settings.otlp_endpoint,
    headers: settings.headers,
  });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.service_name }),
    sampler: new AlwaysOnSampler(),
    idGenerator: ids,
    spanProcessors: [
      new BatchSpanProcessor(exporter, { scheduledDelayMillis: settings.export_delay_ms }),
    ],
  });
  const tracer = provider.getTracer('keel');
  return {
    attempt: (run, agent) => new OtelAttemptTrace(tracer, ids, run, agent),
    shutdown: () => provider.shutdown(),
  };
}
