// Memory flush (docs/compaction.md, `memory_flush = true`): before a compaction folds the
// oldest turns of a thread, the agent gets one model call to write lasting facts from
// those turns to memory. The call's system prompt carries MEMORY_FLUSH_MARKER, it reads
// the turns as a transcript and is offered only the memory write tool (`memory_put`);
// its text is discarded (never the run's answer), its tool calls run through the tool
// path (lookup, visibility, schema check, execution with the tool's deadline).
//
// Durable in two checkpoints, each a `note` entry the model never sees:
//   `called` (+ `memory.flush` event, the call's usage): the calls, before any runs;
//   `done`   (+ `memory.flushed` event): their results.
// A crash before `called` asks the model again (nothing was recorded, nothing ran). A
// crash between the two runs the recorded calls again on resume — `memory_put` is
// idempotent (same namespace, id and text: the same fact), so that is the effect
// protocol's rule for an idempotent tool. After `done` the flush is never repeated: a
// flush is keyed by the compaction's step and the oldest folded turn.

import type { Metrics } from '../metrics.ts';
import type { Provider, ToolDefinition } from '../providers/provider.ts';
import { MEMORY_FLUSH_MARKER } from '../providers/provider.ts';
import type { AgentSpec, EntryBody, MemoryFlushRecord, RunEntry, RunFigures } from '../types.ts';
import type { RunEvent } from '../events.ts';
import type { RetryPolicy } from './model-call.ts';
import { callModel, loopCallOptions } from './model-call.ts';
import type { RunControl } from './run-control.ts';
import type { ToolCallEnv } from './tool-step.ts';
import { executeCall, prepareCall } from './tool-step.ts';
import type { PriceBook } from './usage-prices.ts';
import { countUsage, pricedUsage } from './usage-prices.ts';

/** The tools a flush is offered: memory writes that are safe to run again on resume. */
export const MEMORY_FLUSH_TOOLS: readonly string[] = ['memory_put'];
const MEMORY_FAMILY = 'memory';

export const MEMORY_FLUSH_SYSTEM = `${MEMORY_FLUSH_MARKER} The conversation below is about to be summarised and dropped from your context. Write the lasting facts in it worth remembering later (names, preferences, decisions, commitments) with the memory tools, one fact per call. Answer with the tool calls only; any text is discarded.`;

/**
 * The PUT check of an agent document: `memory_flush` needs an agent that can see
 * `memory_put` (its family `memory` and, when listed, the tool). A message naming the
 * field, or null.
 */
export function memoryFlushProblem(
  spec: Pick<AgentSpec, 'memory_flush' | 'allowed_families' | 'allowed_tools'>,
): string | null {
  if (spec.memory_flush !== true) return null;
  const family =
    spec.allowed_families === undefined || spec.allowed_families.includes(MEMORY_FAMILY);
  const tool =
    spec.allowed_tools === undefined ||
    MEMORY_FLUSH_TOOLS.some((name) => spec.allowed_tools?.includes(name));
  if (family && tool) return null;
  return `body.memory_flush: the agent must be able to use ${MEMORY_FLUSH_TOOLS.join(', ')} (allowed_families must include "${MEMORY_FAMILY}" and allowed_tools, when set, must list it)`;
}

export interface MemoryFlushDeps {
  resolved: { provider: Provider; model: string };
  agent: AgentSpec;
  /** The agent's visible tool definitions; the flush keeps only MEMORY_FLUSH_TOOLS. */
  tools: ToolDefinition[];
  env: () => ToolCallEnv;
  control: RunControl;
  metrics: Metrics;
  retry?: RetryPolicy;
  prices?: PriceBook;
  now: () => number;
  figures: RunFigures;
  checkpoint(entries: EntryBody[], events: RunEvent[]): Promise<void>;
}

/** The turns a compaction is about to fold. */
export interface FoldPlan {
  step: number;
  from_run_id: string;
  through_run_id: string;
  transcript: string;
}

function flushOf(entry: RunEntry): MemoryFlushRecord | undefined {
  return entry.kind === 'note' ? entry.body.memory_flush : undefined;
}

export function isFlushNote(entry: RunEntry): boolean {
  return flushOf(entry) !== undefined;
}

/**
 * Runs the flush before the fold `plan`, unless the journal has it. Returns 'stopped'
 * when the run stops in the middle (the loop goes round), else null (fold now).
 */
export async function memoryFlush(
  deps: MemoryFlushDeps,
  entries: readonly RunEntry[],
  plan: FoldPlan,
): Promise<'stopped' | null> {
  const mine = entries
    .map(flushOf)
    .filter(
      (record): record is MemoryFlushRecord =>
        record !== undefined &&
        record.step === plan.step &&
        record.from_run_id === plan.from_run_id,
    );
  if (mine.some((record) => record.phase === 'done')) return null;
  const called = mine.find((record) => record.phase === 'called');
  if (called) return runCalls(deps, called);
  const tools = deps.tools.filter((tool) => MEMORY_FLUSH_TOOLS.includes(tool.name));
  if (tools.length === 0) return null;
  const result = await callModel({
    provider: deps.resolved.provider,
    request: {
      model: deps.resolved.model,
      system: MEMORY_FLUSH_SYSTEM,
      context: [],
      entries: [
        {
          kind: 'user',
          body: { text: plan.transcript, payload: { text: plan.transcript } },
          run_id: plan.through_run_id,
          seq: 0,
          attempt: 0,
          ts: '',
        },
      ],
      tools,
      temperature: 0,
      max_tokens: deps.agent.max_tokens,
    },
    ...loopCallOptions(deps, plan.step),
  });
  if (result.kind === 'stopped') return 'stopped';
  const base = {
    step: plan.step,
    from_run_id: plan.from_run_id,
    through_run_id: plan.through_run_id,
  };
  if (result.kind === 'failed') {
    // A flush is a courtesy to memory: its failure is recorded, the compaction goes on.
    const record: MemoryFlushRecord = { ...base, phase: 'done', calls: [], results: [] };
    await deps.checkpoint(
      [{ kind: 'note', body: { text: '', memory_flush: record } }],
      [{ type: 'memory.flushed', data: { step: plan.step, results: [], error: result.error } }],
    );
    return null;
  }
  const { assistant } = result.response;
  const record: MemoryFlushRecord = { ...base, phase: 'called', calls: assistant.tool_calls };
  deps.figures.usage.model_calls += 1;
  deps.figures.usage.input_tokens += assistant.usage.input_tokens;
  deps.figures.usage.output_tokens += assistant.usage.output_tokens;
  const priced = pricedUsage(deps.prices, deps.agent.model, assistant.usage);
  await deps.checkpoint(
    [{ kind: 'note', body: { text: '', memory_flush: record } }],
    [
      {
        type: 'memory.flush',
        data: {
          ...base,
          calls: assistant.tool_calls.map(({ call_id, name }) => ({ call_id, name })),
          usage: assistant.usage,
          model: priced.model,
          cost_usd: priced.cost_usd,
          latency_ms: result.latencyMs,
        },
      },
    ],
  );
  countUsage(deps.metrics, priced.model, assistant.usage, priced.cost_usd);
  return runCalls(deps, record);
}

async function runCalls(
  deps: MemoryFlushDeps,
  called: MemoryFlushRecord,
): Promise<'stopped' | null> {
  const env = deps.env();
  const results: NonNullable<MemoryFlushRecord['results']> = [];
  for (const call of called.calls) {
    if (deps.control.stopped) return 'stopped';
    if (!MEMORY_FLUSH_TOOLS.includes(call.name)) {
      const error = `the memory flush may only call ${MEMORY_FLUSH_TOOLS.join(', ')}`;
      results.push({ call_id: call.call_id, name: call.name, ok: false, error });
      continue;
    }
    const prepared = prepareCall(call, env);
    if (prepared.kind === 'rejected') {
      const error = prepared.result.error?.message ?? 'rejected';
      results.push({ call_id: call.call_id, name: call.name, ok: false, error });
      continue;
    }
    deps.figures.usage.tool_calls += 1;
    const result = await executeCall(call, prepared.tool, prepared.input, env);
    const entry: (typeof results)[number] = {
      call_id: call.call_id,
      name: call.name,
      ok: result.ok,
    };
    if (result.error) entry.error = result.error.message;
    results.push(entry);
  }
  if (deps.control.stopped) return 'stopped';
  const record: MemoryFlushRecord = { ...called, phase: 'done', results };
  await deps.checkpoint(
    [{ kind: 'note', body: { text: '', memory_flush: record } }],
    [{ type: 'memory.flushed', data: { step: called.step, results } }],
  );
  return null;
}
