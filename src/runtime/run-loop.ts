// The durable agent loop of one claimed run attempt (docs/architecture.md, steps 5–7;
// docs/reliability.md). The run's entries are the state: every decision below is derived
// from them, so a resumed attempt continues exactly where the last checkpoint left off —
//   last entry an assistant entry with unanswered tool calls → answer those calls;
//   last entry an assistant entry without tool calls → evaluate the final answer;
//   anything else → the next model step.
// A recorded model response is never requested again (I5); a recorded tool result is
// never produced again (I4); calls left in flight by an earlier attempt follow
// resume-plan.ts.

import type { Provider, ToolDefinition } from '../providers/provider.ts';
import type { ClaimedRun } from '../store/store.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { createToolRegistry } from '../tools/registry.ts';
import type { Agent, EntryBody, RunFigures, RunOutcome } from '../types.ts';
import type { RunEvent } from '../events.ts';
import { contextTurns, systemPrompt, userText } from './model-input.ts';
import { ContextKeeper } from './compaction.ts';
import type { MemoryFlushDeps } from './memory-flush.ts';
import { memoryFlush } from './memory-flush.ts';
import { TokenCounter } from './token-count.ts';
import { recallForTurn } from './recall.ts';
import type { ModelStepDeps } from './model-step.ts';
import { modelStep } from './model-step.ts';
import { judgeFinalAnswer } from './final-answer.ts';
import { OutputSchemas } from './output-schema.ts';
import { runFailed } from './finalize.ts';
import type { RunControl, StopCause } from './run-control.ts';
import { RunStopped } from './run-control.ts';
import { OUTCOME_UNKNOWN_MESSAGE, crashedAttempts } from './resume-plan.ts';
import { planForResume, resumedEvent } from './resume-plan.ts';
import { RunJournal } from './journal.ts';
import { openCalls } from './open-calls.ts';
import { takeSteeredTurns, withSteeredTexts } from './steering.ts';
import type { ToolStepDeps } from './tool-step.ts';
import type { RunLoopDeps } from './loop-deps.ts';

export type { RunLoopDeps } from './loop-deps.ts';
import { answerToolCalls, toolCallEnv, toolDefinitions } from './tool-step.ts';
import { ApprovalGate } from './approvals.ts';
import type { AttemptTrace } from './tracer.ts';
import { noopTracer } from './tracer.ts';
import { budgetStop } from './budgets.ts';

/** How an attempt ends: a run outcome to finalize, or a stop that leaves the run as is. */
type AttemptOutcome = RunOutcome | { status: 'stopped'; cause: StopCause };

interface AttemptResult {
  outcome: AttemptOutcome;
  figures: RunFigures;
}

type ResolvedModel = { provider: Provider; model: string };

const DEFAULT_MAX_ATTEMPTS = 5;

class RunAttempt {
  private readonly now: () => number;
  private readonly fence;
  private readonly startedAt: number;
  private readonly journal: RunJournal;
  /** The thread's turns the model sees, kept within context_tokens (compaction.ts). */
  private keeper!: ContextKeeper;
  readonly figures: RunFigures;
  /** Calls found in flight at resume whose effect is unknown (resume-plan.ts). */
  private uncertain = new Set<string>();
  private crashedCalls = new Set<string>();
  private readonly tools: ToolRegistry;
  private readonly toolDefinitions: ToolDefinition[];
  private readonly approvals: ApprovalGate;
  readonly trace: AttemptTrace;

  constructor(
    private readonly deps: RunLoopDeps,
    private readonly claimed: ClaimedRun,
    private readonly agent: Agent,
    private readonly control: RunControl,
    tools: ToolRegistry | undefined,
  ) {
    this.now = deps.now ?? Date.now;
    this.startedAt = this.now();
    this.fence = { run_id: claimed.run.run_id, attempt: claimed.run.attempt };
    this.figures = { steps: 0, usage: { ...claimed.run.usage }, elapsed_ms: claimed.elapsed_ms };
    this.journal = new RunJournal(deps, this.fence, control, this.now);
    this.tools = tools ?? deps.tools ?? createToolRegistry([]);
    this.toolDefinitions = toolDefinitions(this.tools, agent);
    this.approvals = new ApprovalGate(deps.store, claimed.run, this.fence, agent);
    this.trace = (deps.tracer ?? noopTracer).attempt(claimed.run, agent);
  }

  /** Time left of timeout_ms, counted across attempts (not while no worker held it). */
  get remainingMs(): number {
    return this.agent.timeout_ms - this.tick().elapsed_ms;
  }

  /** The figures with elapsed_ms brought up to now: earlier attempts' time + this one's. */
  tick(): RunFigures {
    this.figures.elapsed_ms = this.claimed.elapsed_ms + (this.now() - this.startedAt);
    return this.figures;
  }

  async execute(): Promise<AttemptOutcome> {
    const resolved = this.deps.providers.resolve(this.agent.model);
    if (!resolved) {
      const message = `model "${this.agent.model}" names a provider that is not configured`;
      return runFailed('MODEL_NOT_FOUND', message);
    }
    // First, before anything that could crash again: a run that keeps crashing ends.
    const crashed = await crashedAttempts(this.deps.store, this.claimed.run);
    const maxAttempts = this.deps.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    if (crashed >= maxAttempts) {
      const message = `the run crashed on ${crashed} attempts (max_attempts is ${maxAttempts})`;
      return runFailed('RUN_CRASHED', message);
    }
    this.keeper = this.contextKeeper(resolved);
    await this.begin();
    for (;;) {
      const outcome = this.stopOutcome() ?? (await this.advance(resolved));
      if (outcome) return outcome;
    }
  }

  /** Loads the checkpoint; the first attempt records the user entry, later ones resume. */
  private async begin(): Promise<void> {
    const { run } = this.claimed;
    const loaded = await this.journal.load();
    this.figures.steps = loaded.filter((entry) => entry.kind === 'assistant').length;
    const thread = await this.deps.store.getThread(run.tenant, run.agent, run.scope);
    this.keeper.load(contextTurns(thread, this.agent.context_window), loaded);

    const entries: EntryBody[] = [];
    const events: RunEvent[] = [];
    if (!loaded.some((entry) => entry.kind === 'user')) {
      const text = userText(run.input);
      if (this.agent.recall) {
        const scope = { tenant: run.tenant, agent: run.agent, scope: run.scope };
        const memory = this.deps.toolPorts?.(scope).memory;
        const recalled = await recallForTurn(this.agent.recall, text, memory);
        entries.push(...recalled.entries);
        events.push(recalled.event);
      }
      entries.push({ kind: 'user', body: { text, payload: run.input } });
    }
    if (run.attempt > 1) {
      const plan = await planForResume(this.deps.store, run, loaded, this.tools);
      this.uncertain = new Set(plan.uncertain);
      this.crashedCalls = new Set(plan.crashed);
      events.push(resumedEvent(run.attempt, loaded.length, this.figures.steps, plan));
    }
    if (entries.length > 0 || events.length > 0) await this.checkpoint(entries, events);
  }

  private stopOutcome(): AttemptOutcome | null {
    const cause = this.control.cause;
    if (cause === null) return null;
    if (cause === 'deadline') return this.timeoutFailure();
    return { status: 'stopped', cause };
  }

  private timeoutFailure(): RunOutcome {
    const message = `the run exceeded its timeout_ms of ${this.agent.timeout_ms} ms`;
    return runFailed('RUN_TIMEOUT', message);
  }

  /** One move of the state machine; returns the outcome when the run is over. */
  private async advance(resolved: ResolvedModel): Promise<AttemptOutcome | null> {
    const open = openCalls(this.journal.entries);
    if (open && open.pending.length > 0) {
      if (this.uncertain.size > 0 && this.agent.on_uncertain_effect === 'fail') {
        const message = `effectful call(s) ${[...this.uncertain].join(', ')}: ${OUTCOME_UNKNOWN_MESSAGE}`;
        return runFailed('EFFECT_OUTCOME_UNKNOWN', message);
      }
      await answerToolCalls(this.toolStepDeps(), {
        ...open,
        uncertain: this.uncertain,
        crashed: this.crashedCalls,
      });
      this.uncertain.clear();
      this.crashedCalls.clear();
      return null;
    }
    // A step boundary: turns steered at this run join the journal first (steering.ts),
    // while the run has a model step left to answer them; else they run next.
    const canAnswer = this.figures.steps < this.agent.max_steps;
    if (canAnswer && (await takeSteeredTurns(this.journal, this.deps.failpoints))) return null;
    const last = this.journal.entries[this.journal.entries.length - 1];
    if (last?.kind === 'assistant' && last.body.tool_calls.length === 0) {
      const verdict = judgeFinalAnswer(
        last.body.text,
        this.agent,
        this.journal.entries,
        this.deps.outputSchemas ?? new OutputSchemas(1),
      );
      if (verdict.kind === 'final') {
        const outcome = withSteeredTexts(verdict.outcome, this.journal.entries);
        return this.keeper.withTurn(outcome, this.journal.entries);
      }
      const text = verdict.note;
      await this.checkpoint(
        [{ kind: 'note', body: { text } }],
        [{ type: 'run.note', data: { text } }],
      );
      return null;
    }
    // Compaction (compaction.ts): before the step when the input would not fit; once
    // after a provider's "context length exceeded", then the step is retried.
    const step = this.figures.steps + 1;
    const fitted = canAnswer ? await this.keeper.fit(this.journal.entries, step) : null;
    if (fitted !== null) return fitted === 'again' ? null : fitted;
    const inputBefore = this.figures.usage.input_tokens;
    const next = await modelStep(this.modelStepDeps(resolved), this.journal.entries, () =>
      this.timeoutFailure(),
    );
    this.keeper.observe(this.figures.usage.input_tokens - inputBefore);
    const retry =
      next && next !== 'stopped'
        ? await this.keeper.overflowed(next, this.journal.entries, step)
        : null;
    if (retry !== null) return retry === 'again' ? null : retry;
    return next === 'stopped'
      ? (this.stopOutcome() ?? { status: 'stopped', cause: 'shutdown' })
      : next;
  }

  private checkpoint(entries: EntryBody[], events: RunEvent[]): Promise<void> {
    return this.journal.checkpoint(entries, this.trace.stamp(events), this.tick());
  }

  private modelStepDeps(resolved: ResolvedModel): ModelStepDeps {
    const { metrics, failpoints, live, retry } = this.deps;
    // No spreads: V8 builds a literal that starts with a spread and adds properties on a
    // slow path (µs per object, at every model step; bench/overhead).
    const deps: ModelStepDeps = {
      runId: this.fence.run_id,
      agent: this.agent,
      resolved,
      context: this.keeper.context,
      tools: this.toolDefinitions,
      control: this.control,
      metrics,
      failpoints,
      now: this.now,
      figures: this.figures,
      remainingMs: () => this.remainingMs,
      checkpoint: (entries, events) => this.checkpoint(entries, events),
      trace: this.trace,
      budget: () =>
        budgetStop(this.deps.usage, this.claimed.run, this.agent, this.figures, this.now()),
    };
    if (this.deps.prices) deps.prices = this.deps.prices;
    if (live) deps.live = live;
    if (retry) deps.retry = retry;
    return deps;
  }

  private contextKeeper(resolved: ResolvedModel): ContextKeeper {
    const { metrics, failpoints, retry } = this.deps;
    return new ContextKeeper({
      agent: this.agent,
      resolved,
      system: systemPrompt(this.agent),
      tools: this.toolDefinitions,
      counter: this.deps.tokenCounter ?? new TokenCounter(),
      control: this.control,
      metrics,
      failpoints,
      ...(retry && { retry }),
      ...(this.deps.prices && { prices: this.deps.prices }),
      now: this.now,
      figures: this.figures,
      checkpoint: (entries, events) => this.checkpoint(entries, events),
      ...(this.agent.memory_flush && {
        beforeFold: (entries, plan) => memoryFlush(this.flushDeps(resolved), entries, plan),
      }),
    });
  }

  private flushDeps(resolved: ResolvedModel): MemoryFlushDeps {
    const { metrics, retry, prices } = this.deps;
    const checkpoint = this.modelStepDeps(resolved).checkpoint;
    const env = () => this.toolStepDeps().env;
    const { agent, toolDefinitions: tools, control, now, figures } = this;
    return {
      resolved,
      agent,
      tools,
      env,
      control,
      metrics,
      now,
      figures,
      checkpoint,
      ...(retry && { retry }),
      ...(prices && { prices }),
    };
  }

  private toolStepDeps(): ToolStepDeps {
    const { run } = this.claimed;
    return {
      env: toolCallEnv(this.deps, run, this.agent, this.tools, this.control, {
        now: this.now,
        runDeadline: this.now() + this.remainingMs,
      }),
      attempt: run.attempt,
      control: this.control,
      failpoints: this.deps.failpoints,
      usage: this.figures.usage,
      checkpoint: (entries, events) => this.checkpoint(entries, events),
      approvals: this.approvals,
      trace: this.trace,
    };
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
): Promise<AttemptResult> {
  const tools = deps.toolsFor ? await deps.toolsFor(claimed.run.tenant) : undefined;
  const attempt = new RunAttempt(deps, claimed, agent, control, tools);
  // setTimeout overflows above 2^31-1 ms; a longer deadline is checked at each step.
  const deadlineMs = Math.min(Math.max(0, attempt.remainingMs), 2_147_483_647);
  const deadline = setTimeout(() => control.stop('deadline'), deadlineMs);
  let outcome: AttemptOutcome;
  try {
    outcome = await attempt.execute();
  } catch (error) {
    if (!(error instanceof RunStopped)) {
      attempt.trace.ended({ status: 'stopped', cause: 'crashed' }, attempt.tick());
      throw error;
    }
    outcome = { status: 'stopped', cause: error.stopCause };
  } finally {
    clearTimeout(deadline);
  }
  attempt.trace.ended(outcome, attempt.tick());
  return { outcome, figures: { ...attempt.tick(), usage: { ...attempt.figures.usage } } };
}
