// The durable agent loop of one claimed run attempt (spec/agent-loop.md). The run's
// entries are the state: every decision below is derived from them, so a resumed
// attempt continues exactly where the last checkpoint left off —
//   last entry an assistant entry with unanswered tool calls → answer those calls;
//   last entry an assistant entry without tool calls → evaluate the final answer;
//   anything else → the next model step.
// A recorded model response is never requested again (I5); a recorded tool result is
// never produced again (I4); calls left in flight by an earlier attempt follow
// resume-plan.ts.

import type { Logger } from '../logger.ts';
import type { Failpoints } from '../failpoints.ts';
import type { Metrics } from '../metrics.ts';
import type { Provider, ProviderRegistry, ToolDefinition } from '../providers/provider.ts';
import type { AgentStore, ClaimedRun, NewEvent, RunStore } from '../store/store.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { createToolRegistry } from '../tools/registry.ts';
import type { ToolPorts } from '../tools/tool.ts';
import type {
  Agent,
  AssistantBody,
  EntryBody,
  JsonObject,
  RunEntry,
  RunError,
  ThreadMessage,
  Usage,
} from '../types.ts';
import { isKeelError } from '../errors.ts';
import type { RunEvent } from './events.ts';
import type { LiveEvents } from './live.ts';
import type { RetryPolicy } from './model-call.ts';
import { DEFAULT_RETRY_POLICY, callModel } from './model-call.ts';
import { contextTurns, systemPrompt, unansweredCalls, userText } from './model-input.ts';
import { finalOutput, repairNote } from './final-answer.ts';
import { checkOutputSchema } from './output-schema.ts';
import type { RunControl, StopCause } from './run-control.ts';
import { RunStopped } from './run-control.ts';
import { OUTCOME_UNKNOWN_MESSAGE, planForResume } from './resume-plan.ts';
import { openCalls } from './open-calls.ts';
import type { PortScope, ToolPortStore } from './tool-ports.ts';
import { answerToolCalls } from './tool-round.ts';

export interface RunLoopDeps {
  store: RunStore & AgentStore & ToolPortStore;
  providers: ProviderRegistry;
  logger: Logger;
  metrics: Metrics;
  failpoints: Failpoints;
  /** Every tool of this process; each agent sees its visible subset. Default: none. */
  tools?: ToolRegistry;
  /** Builds a run's tenant-scoped ports; default createToolPorts({store, now}). */
  toolPorts?: (scope: PortScope) => ToolPorts;
  live?: LiveEvents;
  retry?: RetryPolicy;
  now?: () => number;
  /** Test-only switches that break one guarantee each (config.seeded_bugs). */
  seededBugs?: readonly string[];
}

export type LoopOutcome =
  | { kind: 'succeeded'; output: JsonObject; replyText: string }
  | { kind: 'failed'; error: RunError }
  | { kind: 'stopped'; cause: StopCause };

export interface LoopResult {
  outcome: LoopOutcome;
  steps: number;
  usage: Usage;
  /** Run time across all attempts so far (what the store keeps as elapsed_ms). */
  elapsedMs: number;
}

function toEvent(event: RunEvent): NewEvent {
  return { type: event.type, data: event.data as unknown as JsonObject };
}

class RunAttempt {
  private readonly now: () => number;
  private readonly fence;
  private readonly startedAt: number;
  private entries: RunEntry[] = [];
  private steps = 0;
  private usage: Usage;
  private context: ThreadMessage[] = [];
  /** Calls found in flight at resume whose effect is unknown (resume-plan.ts). */
  private uncertain = new Set<string>();
  /** Seeded bug `entries_at_end`: entries held here instead of being journaled. */
  private readonly unjournaled: EntryBody[] | null;
  private readonly tools: ToolRegistry;
  private readonly toolDefinitions: ToolDefinition[];

  constructor(
    private readonly deps: RunLoopDeps,
    private readonly claimed: ClaimedRun,
    private readonly agent: Agent,
    private readonly control: RunControl,
  ) {
    this.now = deps.now ?? Date.now;
    this.startedAt = this.now();
    this.fence = { run_id: claimed.run.run_id, attempt: claimed.run.attempt };
    this.usage = { ...claimed.run.usage };
    this.unjournaled = deps.seededBugs?.includes('entries_at_end') ? [] : null;
    this.tools = deps.tools ?? createToolRegistry([]);
    this.toolDefinitions = this.tools.visibleTo(agent).map((tool) => {
      const { name, description, input_schema } = this.tools.describe(tool);
      return { name, description, input_schema };
    });
  }

  /**
   * Run time across attempts: earlier attempts' time (up to their last checkpoint) plus
   * this attempt's. Time while no worker held the run is not counted.
   */
  get elapsedMs(): number {
    return this.claimed.elapsed_ms + (this.now() - this.startedAt);
  }

  /** Time left of timeout_ms, counted across attempts. */
  get remainingMs(): number {
    return this.agent.timeout_ms - this.elapsedMs;
  }

  result(outcome: LoopOutcome): LoopResult {
    return { outcome, steps: this.steps, usage: { ...this.usage }, elapsedMs: this.elapsedMs };
  }

  async execute(): Promise<LoopOutcome> {
    const provider = this.deps.providers.resolve(this.agent.model);
    if (!provider) {
      return {
        kind: 'failed',
        error: {
          code: 'MODEL_NOT_FOUND',
          message: `model "${this.agent.model}" names a provider that is not configured`,
        },
      };
    }
    await this.begin();
    for (;;) {
      const stopped = this.stopOutcome();
      if (stopped) return stopped;
      const next = await this.advance(provider);
      if (next) {
        if (next.kind !== 'stopped') await this.journalHeldEntries();
        return next;
      }
    }
  }

  /** Seeded bug `entries_at_end` only: the buffered entries, written at the very end. */
  private async journalHeldEntries(): Promise<void> {
    if (!this.unjournaled?.length) return;
    await this.deps.store.appendProgress(this.fence, { entries: this.unjournaled.splice(0) });
  }

  /** Loads the checkpoint; the first attempt records the user entry, later ones resume. */
  private async begin(): Promise<void> {
    const { run } = this.claimed;
    this.entries = await this.deps.store.loadEntries(run.run_id);
    this.steps = this.entries.filter((entry) => entry.kind === 'assistant').length;
    const thread = await this.deps.store.getThread(run.tenant, run.agent, run.scope);
    this.context = contextTurns(thread, this.agent.context_window);

    const entries: EntryBody[] = [];
    const events: RunEvent[] = [];
    if (!this.entries.some((entry) => entry.kind === 'user')) {
      entries.push({ kind: 'user', body: { text: userText(run.input), payload: run.input } });
    }
    if (run.attempt > 1) {
      const plan = await planForResume(this.deps.store, run, this.entries, this.tools);
      this.uncertain = new Set(plan.uncertain);
      events.push({
        type: 'run.resumed',
        data: {
          attempt: run.attempt,
          entries_loaded: this.entries.length,
          steps: this.steps,
          rerun_calls: plan.rerun,
          uncertain_calls: plan.uncertain,
          not_started_calls: plan.not_started,
        },
      });
    }
    if (entries.length > 0 || events.length > 0) await this.checkpoint(entries, events);
  }

  private stopOutcome(): LoopOutcome | null {
    const cause = this.control.cause;
    if (cause === null) return null;
    if (cause === 'deadline') return this.timeoutFailure();
    return { kind: 'stopped', cause };
  }

  private timeoutFailure(): LoopOutcome {
    return {
      kind: 'failed',
      error: {
        code: 'RUN_TIMEOUT',
        message: `the run exceeded its timeout_ms of ${this.agent.timeout_ms} ms`,
      },
    };
  }

  /** One move of the state machine; returns the outcome when the run is over. */
  private async advance(provider: {
    provider: Provider;
    model: string;
  }): Promise<LoopOutcome | null> {
    const open = openCalls(this.entries);
    if (open && open.pending.length > 0) {
      if (this.uncertain.size > 0 && this.agent.on_uncertain_effect === 'fail') {
        return {
          kind: 'failed',
          error: {
            code: 'EFFECT_OUTCOME_UNKNOWN',
            message: `effectful call(s) ${[...this.uncertain].join(', ')}: ${OUTCOME_UNKNOWN_MESSAGE}`,
          },
        };
      }
      await answerToolCalls({
        deps: { ...this.deps, tools: this.tools },
        run: this.claimed.run,
        agent: this.agent,
        control: this.control,
        step: open.step,
        pending: open.pending,
        uncertain: this.uncertain,
        runDeadline: this.now() + this.remainingMs,
        now: this.now,
        usage: this.usage,
        checkpoint: (entries, events) => this.checkpoint(entries, events),
      });
      this.uncertain.clear();
      return null;
    }
    const last = this.entries[this.entries.length - 1];
    if (last?.kind === 'assistant' && last.body.tool_calls.length === 0) {
      return this.evaluateAnswer(last.body);
    }
    return this.modelStep(provider);
  }

  private async evaluateAnswer(answer: AssistantBody): Promise<LoopOutcome | null> {
    const output = finalOutput(answer.text);
    const schema = this.agent.output_schema;
    const problems = schema ? checkOutputSchema(schema, output) : [];
    if (problems.length === 0) return { kind: 'succeeded', output, replyText: answer.text };
    // Every earlier final answer of this run was invalid (it would have ended the run),
    // so a second one means the repair step is used up.
    const finals = this.entries.filter(
      (entry) => entry.kind === 'assistant' && entry.body.tool_calls.length === 0,
    ).length;
    if (finals >= 2 || !schema) {
      return {
        kind: 'failed',
        error: {
          code: 'OUTPUT_INVALID',
          message: `the final answer does not match output_schema: ${problems.join('; ')}`,
        },
      };
    }
    const text = repairNote(problems, schema);
    await this.checkpoint(
      [{ kind: 'note', body: { text } }],
      [{ type: 'run.note', data: { text } }],
    );
    return null;
  }

  private async modelStep(resolved: {
    provider: Provider;
    model: string;
  }): Promise<LoopOutcome | null> {
    if (this.steps >= this.agent.max_steps) {
      return {
        kind: 'failed',
        error: {
          code: 'MAX_STEPS_EXCEEDED',
          message: `max_steps (${this.agent.max_steps}) reached before a final answer`,
        },
      };
    }
    if (this.remainingMs <= 0) return this.timeoutFailure();
    const unanswered = unansweredCalls(this.entries);
    if (unanswered.length > 0) {
      // Transcript integrity: never send a tool call without its result. Unreachable
      // unless the loop itself is wrong; failing beats sending a broken transcript.
      return {
        kind: 'failed',
        error: {
          code: 'INTERNAL',
          message: `transcript integrity: call(s) ${unanswered.join(', ')} have no result`,
        },
      };
    }
    const step = this.steps + 1;
    await this.checkpoint([], [{ type: 'model.request', data: { step, model: this.agent.model } }]);

    const { live } = this.deps;
    const runId = this.fence.run_id;
    const result = await callModel({
      provider: resolved.provider,
      request: {
        model: resolved.model,
        system: systemPrompt(this.agent),
        context: this.context,
        // A copy: the provider may keep the request while the loop appends.
        entries: [...this.entries],
        tools: this.toolDefinitions,
        temperature: this.agent.temperature,
        max_tokens: this.agent.max_tokens,
        ...(live && {
          onDelta: (text: string) =>
            live.publish(runId, { type: 'model.delta', data: { step, text } }),
        }),
      },
      control: this.control,
      policy: this.deps.retry ?? DEFAULT_RETRY_POLICY,
      metrics: this.deps.metrics,
      now: this.now,
      onRetry: (notice) =>
        this.checkpoint(
          [],
          [
            {
              type: 'model.retry',
              data: {
                step,
                attempt: notice.attempt,
                delay_ms: notice.delayMs,
                error: notice.error,
              },
            },
          ],
        ),
    });
    if (result.kind === 'stopped')
      return this.stopOutcome() ?? { kind: 'stopped', cause: 'shutdown' };
    if (result.kind === 'failed') return { kind: 'failed', error: result.error };

    const assistant = result.response.assistant;
    this.deps.failpoints.hit('model.after_response');
    this.steps = step;
    this.usage.model_calls += 1;
    this.usage.input_tokens += assistant.usage.input_tokens;
    this.usage.output_tokens += assistant.usage.output_tokens;
    const raw = result.response.raw as JsonObject | undefined;
    await this.checkpoint(
      [{ kind: 'assistant', body: assistant }],
      [
        {
          type: 'model.response',
          data: {
            step,
            usage: assistant.usage,
            latency_ms: result.latencyMs,
            finish_reason: assistant.finish_reason,
            ...(raw && { raw }),
          },
        },
      ],
    );
    return null;
  }

  /** One fenced transaction: entries + events + steps/usage/elapsed. */
  private async checkpoint(entries: EntryBody[], events: RunEvent[]): Promise<void> {
    const cause = this.control.cause;
    if (cause === 'cancelled' || cause === 'lease_lost') throw new RunStopped(cause);
    const started = this.now();
    const journaled = this.unjournaled ? [] : entries;
    this.unjournaled?.push(...entries);
    try {
      await this.deps.store.appendProgress(this.fence, {
        ...(journaled.length > 0 && { entries: journaled }),
        ...(events.length > 0 && { events: events.map(toEvent) }),
        steps: this.steps,
        usage: this.usage,
        elapsed_ms: this.elapsedMs,
      });
    } catch (error) {
      if (isKeelError(error, 'LEASE_LOST')) {
        this.control.stop('lease_lost');
        throw new RunStopped('lease_lost');
      }
      throw error;
    }
    this.deps.metrics.checkpointDuration.observe((this.now() - started) / 1000);
    const ts = new Date(this.now()).toISOString();
    let seq = this.entries[this.entries.length - 1]?.seq ?? 0;
    for (const entry of entries) {
      seq += 1;
      this.entries.push({
        ...entry,
        run_id: this.fence.run_id,
        seq,
        attempt: this.fence.attempt,
        ts,
      });
    }
  }
}

/**
 * Runs one attempt until a final outcome or a stop. Never finalizes (finalize.ts does);
 * never throws LEASE_LOST (it becomes a `stopped` outcome). Other store errors propagate.
 */
export async function runLoop(
  deps: RunLoopDeps,
  claimed: ClaimedRun,
  agent: Agent,
  control: RunControl,
): Promise<LoopResult> {
  const attempt = new RunAttempt(deps, claimed, agent, control);
  // setTimeout overflows above 2^31-1 ms; a longer deadline is checked at each step.
  const deadlineMs = Math.min(Math.max(0, attempt.remainingMs), 2_147_483_647);
  const deadline = setTimeout(() => control.stop('deadline'), deadlineMs);
  try {
    return attempt.result(await attempt.execute());
  } catch (error) {
    if (error instanceof RunStopped)
      return attempt.result({ kind: 'stopped', cause: error.stopCause });
    throw error;
  } finally {
    clearTimeout(deadline);
  }
}
