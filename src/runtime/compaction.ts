// Compaction (docs/compaction.md): the context a run's model steps see, kept within the
// agent's `context_tokens`. Before each model step the next input is estimated (byte
// bound first, the tokenizer only when that does not fit); when it would not fit, the
// oldest turns of the thread are summarised by a model call and replaced by the summary.
// The compaction is its own journaled step: ONE checkpoint appends a `note` entry holding
// the summary and what was folded, with a `context.compacted` event. A crash before that
// commit repeats only the summary call (nothing was recorded); after it, a resumed
// attempt reads the note and folds its context the same way (foldMessages, shared with
// the store), so a compaction is never lost nor repeated. At finalization the thread
// folds the same turns (the outcome carries the folds).

import type { Failpoints } from '../failpoints.ts';
import type { Metrics } from '../metrics.ts';
import type { Provider, ToolDefinition } from '../providers/provider.ts';
import { SUMMARY_REQUEST_MARKER } from '../providers/provider.ts';
import { SUMMARY_PREFIX, foldMessages } from '../store/rules/threads.ts';
import type {
  Agent,
  CompactionRecord,
  EntryBody,
  RunEntry,
  RunFigures,
  RunOutcome,
  ThreadFold,
  ThreadMessage,
} from '../types.ts';
import type { RunEvent } from '../events.ts';
import type { PriceBook } from './usage-prices.ts';
import { countUsage, pricedUsage } from './usage-prices.ts';
import type { RetryPolicy } from './model-call.ts';
import { callModel, loopCallOptions } from './model-call.ts';
import type { RunControl } from './run-control.ts';
import type { FoldPlan } from './memory-flush.ts';
import { isFlushNote } from './memory-flush.ts';
import type { TokenCounter } from './token-count.ts';
import { MESSAGE_OVERHEAD, contextBudget } from './token-count.ts';

/** What the summarising call is told; the marker lets the fixture model recognise it. */
export const SUMMARY_SYSTEM = `${SUMMARY_REQUEST_MARKER} Summarise the conversation below for the assistant that continues it. Keep names, decisions, open tasks, facts the user gave and commitments made; drop small talk. Write plain prose, no preamble.`;

/** The provider's count may exceed ours (other tokenizer, framing): at most this much. */
const MAX_CORRECTION = 2;
/** Compactions before one model step; more means the run's own entries do not fit. */
const MAX_COMPACTIONS_PER_STEP = 4;
/** Turns counted into the thread once the input's byte bound passes this share. */
const COUNT_TURNS_FROM = 0.25;

export interface CompactionDeps {
  agent: Agent;
  resolved: { provider: Provider; model: string };
  system: string;
  tools: ToolDefinition[];
  counter: TokenCounter;
  control: RunControl;
  metrics: Metrics;
  failpoints: Failpoints;
  retry?: RetryPolicy;
  /** Prices per model (usage-prices.ts): a summary call is billed like any other. */
  prices?: PriceBook;
  now: () => number;
  figures: RunFigures;
  checkpoint(entries: EntryBody[], events: RunEvent[]): Promise<void>;
  /** `memory_flush` (memory-flush.ts): runs before turns are folded; 'stopped' = go round. */
  beforeFold?: (entries: readonly RunEntry[], plan: FoldPlan) => Promise<'stopped' | null>;
}

/** `again`: the loop goes round (a compaction was recorded, or the run must stop). */
type FitResult = RunOutcome | 'again' | null;

interface Turn {
  runId: string;
  messages: ThreadMessage[];
  tokens: number;
}

function compactionOf(entry: RunEntry): CompactionRecord | undefined {
  return entry.kind === 'note' ? entry.body.compaction : undefined;
}

/** The folds recorded in a run's journal, in order. */
export function recordedFolds(entries: readonly RunEntry[]): ThreadFold[] {
  const folds: ThreadFold[] = [];
  for (const entry of entries) {
    const record = compactionOf(entry);
    if (record && entry.kind === 'note') {
      folds.push({ through_run_id: record.through_run_id, summary: entry.body.text });
    }
  }
  return folds;
}

/** The entries a provider gets: compaction and memory flush notes are not conversation. */
export function modelEntries(entries: readonly RunEntry[]): RunEntry[] {
  return entries.filter((entry) => compactionOf(entry) === undefined && !isFlushNote(entry));
}

/** The folded turns as the summarising (and memory flush) call reads them. */
function transcriptOf(messages: readonly ThreadMessage[], share: number): string {
  const whole = messages
    .map((message) =>
      message.summary
        ? `(summary of earlier turns): ${message.content.slice(SUMMARY_PREFIX.length)}`
        : `${message.role}: ${message.content}`,
    )
    .join('\n\n');
  return share < 1 ? whole.slice(0, Math.floor(whole.length * share * 0.9)) : whole;
}

export class ContextKeeper {
  /** The thread's past turns as the next model step sees them. */
  context: ThreadMessage[] = [];
  readonly budget: number;
  private correction = 1;
  /** The exact estimate of the input last checked, for the provider's correction. */
  private lastExact: number | null = null;
  private maxBound = 0;
  private fixedBound: number | null = null;
  private fixedExact: number | null = null;

  constructor(private readonly deps: CompactionDeps) {
    this.budget = contextBudget(deps.agent);
  }

  /** The thread's turns with the compactions this run already recorded. */
  load(turns: ThreadMessage[], entries: readonly RunEntry[]): void {
    let context = turns;
    for (const fold of recordedFolds(entries)) context = foldMessages(context, fold);
    this.context = context;
  }

  private estimate(entries: readonly RunEntry[], exact: boolean): number {
    const { counter } = this.deps;
    let total = exact
      ? (this.fixedExact ??= counter.fixed(this.deps.system, this.deps.tools, true))
      : (this.fixedBound ??= counter.fixed(this.deps.system, this.deps.tools, false));
    for (const message of this.context) total += counter.message(message, exact);
    for (const entry of entries) if (!isFlushNote(entry)) total += counter.entry(entry, exact);
    return total;
  }

  /** Before model step `step`: compacts when the next input would not fit. */
  async fit(entries: readonly RunEntry[], step: number): Promise<FitResult> {
    this.lastExact = null;
    const bound = this.estimate(entries, false);
    this.maxBound = Math.max(this.maxBound, bound);
    if (bound * this.correction <= this.budget) return null;
    await this.deps.counter.load();
    const exact = this.estimate(entries, true);
    this.lastExact = exact;
    if (exact * this.correction <= this.budget) return null;
    const done = entries.filter((entry) => compactionOf(entry)?.step === step).length;
    if (done >= MAX_COMPACTIONS_PER_STEP) return null;
    return this.compact(entries, step, 'budget', exact);
  }

  /**
   * After a failed model step: a provider's "context length exceeded" gets one
   * compaction (the step is then retried once); a second one for the same step — also
   * after a restart, read from the journal — ends the run with the error.
   */
  async overflowed(failed: RunOutcome, entries: readonly RunEntry[], step: number) {
    if (failed.status !== 'failed' || failed.error.code !== 'CONTEXT_EXCEEDED') return null;
    const forced = entries.some((entry) => {
      const record = compactionOf(entry);
      return record?.reason === 'context_length_exceeded' && record.step === step;
    });
    if (forced) return null;
    await this.deps.counter.load();
    return this.compact(entries, step, 'context_length_exceeded', this.estimate(entries, true));
  }

  /** The provider's count of the last checked input corrects later estimates. */
  observe(reportedInputTokens: number): void {
    if (this.lastExact === null || this.lastExact <= 0 || reportedInputTokens <= 0) return;
    const ratio = reportedInputTokens / this.lastExact;
    this.correction = Math.min(MAX_CORRECTION, Math.max(1, ratio));
  }

  /** A succeeded outcome carries the folds and (near the budget) the turn's token counts. */
  async withTurn(outcome: RunOutcome, entries: readonly RunEntry[]): Promise<RunOutcome> {
    if (outcome.status !== 'succeeded') return outcome;
    const folds = recordedFolds(entries);
    const result: RunOutcome = folds.length > 0 ? { ...outcome, compactions: folds } : outcome;
    const { counter } = this.deps;
    if (!counter.loaded && this.maxBound < this.budget * COUNT_TURNS_FROM) return result;
    await counter.load();
    const user = entries.find((entry) => entry.kind === 'user' && !entry.body.steer_id);
    if (!user) return result;
    const texts = [...(outcome.steered_texts ?? []), outcome.reply_text];
    const userTokens = counter.entry(user, true) - MESSAGE_OVERHEAD;
    return { ...result, message_tokens: [userTokens, ...texts.map((t) => counter.count(t))] };
  }

  private async compact(
    entries: readonly RunEntry[],
    step: number,
    reason: CompactionRecord['reason'],
    before: number,
  ): Promise<FitResult> {
    const { agent, counter } = this.deps;
    const turns = this.turns();
    // Nothing to fold: only the run's own entries (or one summary) are left.
    if (turns.length === 0 || (turns.length === 1 && turns[0]?.messages[0]?.summary)) return null;
    const summaryMax = Math.min(agent.max_tokens, Math.max(256, Math.floor(this.budget / 8)));
    let rest = before;
    for (const turn of turns) rest -= turn.tokens;
    const room = this.budget / this.correction - rest - summaryMax;
    // Keep the newest turns that fill half the room, so the next turns fit without
    // compacting again at once. After a refusal our count was wrong for this model: keep
    // at most a quarter of what the refused input's turns held.
    const keepRoom = reason === 'budget' ? room / 2 : Math.min(room, this.turnsTokens(turns)) / 4;
    let keepFrom = turns.length;
    let kept = 0;
    while (keepFrom > 0 && kept + (turns[keepFrom - 1]?.tokens ?? 0) <= keepRoom) {
      keepFrom -= 1;
      kept += turns[keepFrom]?.tokens ?? 0;
    }
    // The summarising call must fit too: fold at most what it can read at once (the
    // next check folds the rest, the summary included).
    const readable =
      this.budget - summaryMax - counter.count(SUMMARY_SYSTEM) - 2 * MESSAGE_OVERHEAD;
    let fold = Math.max(1, keepFrom);
    let foldTokens = turns.slice(0, fold).reduce((sum, turn) => sum + turn.tokens, 0);
    while (fold > 1 && foldTokens > readable) {
      fold -= 1;
      foldTokens -= turns[fold]?.tokens ?? 0;
    }
    const folded = turns.slice(0, fold);
    // One turn longer than that is summarised from its beginning.
    const share = foldTokens > readable ? readable / foldTokens : 1;
    return this.summarise(folded, { step, reason, before, summaryMax, share, entries });
  }

  private async summarise(
    folded: Turn[],
    plan: {
      step: number;
      reason: CompactionRecord['reason'];
      before: number;
      summaryMax: number;
      /** The share of the transcript the summarising call can read (1 = all). */
      share: number;
      entries: readonly RunEntry[];
    },
  ): Promise<FitResult> {
    const { deps } = this;
    const messages = folded.flatMap((turn) => turn.messages);
    const first = folded[0];
    const last = folded[folded.length - 1];
    if (!first || !last) return null;
    const transcript = transcriptOf(messages, plan.share);
    const runId = last.runId;
    if (deps.beforeFold) {
      const flush = { step: plan.step, from_run_id: first.runId, through_run_id: runId };
      if ((await deps.beforeFold(plan.entries, { ...flush, transcript })) === 'stopped') {
        return 'again';
      }
    }
    const result = await callModel({
      provider: deps.resolved.provider,
      request: {
        model: deps.resolved.model,
        system: SUMMARY_SYSTEM,
        context: [],
        entries: [
          {
            kind: 'user',
            body: { text: transcript, payload: { text: transcript } },
            run_id: runId,
            seq: 0,
            attempt: 0,
            ts: last.messages[last.messages.length - 1]?.ts ?? '',
          },
        ],
        tools: [],
        temperature: 0,
        max_tokens: plan.summaryMax,
      },
      ...loopCallOptions(deps, plan.step),
    });
    if (result.kind === 'stopped') return 'again';
    if (result.kind === 'failed') return { status: 'failed', error: result.error };
    // Fault point: the summary exists but is not recorded (kill -9 here → asked again).
    deps.failpoints.hit('compaction.after_summary');
    const { assistant } = result.response;
    const summary = assistant.text.trim() || '(nothing to keep)';
    const context = foldMessages(this.context, { through_run_id: runId, summary });
    const record: CompactionRecord = {
      step: plan.step,
      reason: plan.reason,
      from_run_id: first.runId,
      through_run_id: runId,
      turns: folded.length,
      messages: messages.length,
      tokens_before: plan.before,
      tokens_after: plan.before - this.turnsTokens(folded) + this.summaryTokens(context),
      context_tokens: this.budget,
    };
    deps.figures.usage.model_calls += 1;
    deps.figures.usage.input_tokens += assistant.usage.input_tokens;
    deps.figures.usage.output_tokens += assistant.usage.output_tokens;
    // The store adds this usage to its ledger in the same transaction, like a response's.
    const priced = pricedUsage(deps.prices, deps.agent.model, assistant.usage);
    await deps.checkpoint(
      [{ kind: 'note', body: { text: summary, compaction: record } }],
      [
        {
          type: 'context.compacted',
          data: {
            ...record,
            usage: assistant.usage,
            model: priced.model,
            cost_usd: priced.cost_usd,
            latency_ms: result.latencyMs,
          },
        },
      ],
    );
    countUsage(deps.metrics, priced.model, assistant.usage, priced.cost_usd);
    this.context = context;
    deps.failpoints.hit('compaction.after_commit');
    return 'again';
  }

  private summaryTokens(context: readonly ThreadMessage[]): number {
    const summary = context[0];
    return summary?.summary ? this.deps.counter.message(summary, true) : 0;
  }

  private turnsTokens(turns: readonly Turn[]): number {
    return turns.reduce((sum, turn) => sum + turn.tokens, 0);
  }

  /** The context's turns (the messages of one run; a summary is its own turn), counted. */
  private turns(): Turn[] {
    const turns: Turn[] = [];
    for (const message of this.context) {
      const tokens = this.deps.counter.message(message, true);
      const last = turns[turns.length - 1];
      if (last && last.runId === message.run_id && !message.summary) {
        last.messages.push(message);
        last.tokens += tokens;
      } else turns.push({ runId: message.run_id, messages: [message], tokens });
    }
    return turns;
  }
}
