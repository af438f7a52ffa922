// The model half of a step: the stop conditions checked before a model call, the
// `model.request` intent, the provider call (model-call.ts) and the `assistant` entry +
// `model.response` event appended before anything else happens (docs/architecture.md,
// step 6). A recorded response is never requested again: the loop only gets here when
// the last entry is not an assistant entry.

import type { Failpoints } from '../failpoints.ts';
import type { Metrics } from '../metrics.ts';
import type { Provider, ToolDefinition } from '../providers/provider.ts';
import type {
  Agent,
  EntryBody,
  RunEntry,
  RunFigures,
  RunOutcome,
  ThreadMessage,
} from '../types.ts';
import type { RunEvent } from '../events.ts';
import { runFailed } from './finalize.ts';
import type { LiveEvents } from './live.ts';
import { modelResponseEvent } from './model-response-event.ts';
import type { RetryPolicy } from './model-call.ts';
import { callModel, loopCallOptions } from './model-call.ts';
import { systemPrompt, unansweredCalls } from './model-input.ts';
import { modelEntries } from './compaction.ts';
import type { RunControl } from './run-control.ts';
import type { AttemptTrace } from './tracer.ts';
import type { PriceBook } from './usage-prices.ts';
import { countUsage, pricedUsage } from './usage-prices.ts';

export interface ModelStepDeps {
  runId: string;
  agent: Agent;
  resolved: { provider: Provider; model: string };
  /** The thread's past turns the model sees before this run's entries. */
  context: ThreadMessage[];
  tools: ToolDefinition[];
  control: RunControl;
  metrics: Metrics;
  failpoints: Failpoints;
  live?: LiveEvents;
  retry?: RetryPolicy;
  now: () => number;
  /** Figures of the run; steps and usage are updated here, elapsed_ms by the loop. */
  figures: RunFigures;
  remainingMs(): number;
  /** One fenced transaction (run-loop's checkpoint). */
  checkpoint(entries: EntryBody[], events: RunEvent[]): Promise<void>;
  /** Spans of the attempt (tracer.ts); absent = none. */
  trace?: AttemptTrace;
  /** The run's and its tenant's budgets at this step boundary (budgets.ts). */
  budget?: () => Promise<RunOutcome | null>;
  /** Prices per model (usage-prices.ts); absent = every call costs 0. */
  prices?: PriceBook;
}

/**
 * One model step. Returns the outcome when the run is over, 'stopped' when the attempt
 * must stop (the loop reads why from the control), null when the response is recorded.
 */
export async function modelStep(
  deps: ModelStepDeps,
  entries: readonly RunEntry[],
  timeoutFailure: () => RunOutcome,
): Promise<RunOutcome | 'stopped' | null> {
  const { agent, figures, live, runId } = deps;
  if (figures.steps >= agent.max_steps) {
    const message = `max_steps (${agent.max_steps}) reached before a final answer`;
    return runFailed('MAX_STEPS_EXCEEDED', message);
  }
  if (deps.remainingMs() <= 0) return timeoutFailure();
  const overBudget = deps.budget ? await deps.budget() : null;
  if (overBudget) return overBudget;
  const unanswered = unansweredCalls(entries);
  // Transcript integrity: never send a tool call without its result. Unreachable
  // unless the loop itself is wrong; failing beats sending a broken transcript.
  if (unanswered.length > 0) {
    const message = `transcript integrity: call(s) ${unanswered.join(', ')} have no result`;
    return runFailed('INTERNAL', message);
  }
  const step = figures.steps + 1;
  const { provider } = deps.resolved;
  deps.trace?.modelStarted(step, { provider: provider.name, model: deps.resolved.model, agent });
  await deps.checkpoint([], [{ type: 'model.request', data: { step, model: agent.model } }]);

  const result = await callModel({
    provider: deps.resolved.provider,
    request: {
      model: deps.resolved.model,
      system: systemPrompt(agent),
      context: deps.context,
      // A copy (the provider may keep the request while the loop appends), without
      // compaction notes: their summaries are in the context (compaction.ts).
      entries: modelEntries(entries),
      tools: deps.tools,
      temperature: agent.temperature,
      max_tokens: agent.max_tokens,
      ...(live && {
        watched: () => live.watched(runId),
        onDelta: (text: string) =>
          live.publish(runId, { type: 'model.delta', data: { step, text } }),
      }),
    },
    ...loopCallOptions(deps, step),
  });
  deps.trace?.modelEnded(
    result.kind === 'response'
      ? { kind: 'response', assistant: result.response.assistant }
      : result,
  );
  if (result.kind === 'stopped') return 'stopped';
  if (result.kind === 'failed') return { status: 'failed', error: result.error };

  const { assistant, raw } = result.response;
  deps.failpoints.hit('model.after_response');
  figures.steps = step;
  figures.usage.model_calls += 1;
  figures.usage.input_tokens += assistant.usage.input_tokens;
  figures.usage.output_tokens += assistant.usage.output_tokens;
  // The store adds the event's usage to its ledger in the same transaction (usage.ts).
  const priced = pricedUsage(deps.prices, agent.model, assistant.usage);
  await deps.checkpoint(
    [{ kind: 'assistant', body: assistant }],
    [
      modelResponseEvent(
        {
          step,
          usage: assistant.usage,
          model: priced.model,
          cost_usd: priced.cost_usd,
          latency_ms: result.latencyMs,
          finish_reason: assistant.finish_reason,
          ...(assistant.text !== '' && { text: assistant.text }),
        },
        raw,
      ),
    ],
  );
  countUsage(deps.metrics, priced.model, assistant.usage, priced.cost_usd);
  return null;
}
