// Shared domain types. Wire names are snake_case because these objects are what the
// HTTP API returns; the store keeps the same shape so nothing is translated twice.

import type { ErrorCode, RunErrorCode, ToolResultCode } from './errors.ts';
import type { WebErrorCode } from './web/errors.ts';

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export const RUN_STATUSES = [
  'queued',
  'running',
  'waiting',
  'succeeded',
  'failed',
  'cancelled',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const TERMINAL_STATUSES: readonly RunStatus[] = ['succeeded', 'failed', 'cancelled'];
export function isTerminal(status: RunStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

export type RunSource = 'api' | 'schedule';

export interface Tenant {
  name: string;
  metadata: JsonObject;
  created_at: string;
  updated_at: string;
}

export interface TokenRecord {
  id: string;
  tenant: string;
  name: string;
  created_at: string;
}

export type UncertainEffectPolicy = 'tell_model' | 'fail';

/** Every field of docs/http-api.md's agent document table, with defaults already applied. */
export interface AgentSpec {
  model: string;
  persona?: string;
  allowed_families?: string[];
  allowed_tools?: string[];
  max_steps: number;
  timeout_ms: number;
  tool_timeout_ms: number;
  temperature: number;
  max_tokens: number;
  context_window: number;
  output_schema?: JsonObject;
  on_uncertain_effect: UncertainEffectPolicy;
  /** Top k facts of a memory namespace put into the model's context each turn. */
  recall?: AgentRecall;
  /** Globs over tool names whose calls wait for a person's decision (docs/approvals.md). */
  require_approval?: string[];
  /** A pending approval is denied with APPROVAL_TIMEOUT after this long; absent = never. */
  approval_timeout_ms?: number;
  /** Token budget of one model input (docs/compaction.md); absent = model window − max_tokens. */
  context_tokens?: number;
  /** Run budgets: input + output tokens / USD across the run (BUDGET_EXCEEDED). */
  max_total_tokens?: number;
  max_cost_usd?: number;
  /** Before a compaction folds turns: one step to write lasting facts to memory. */
  memory_flush?: boolean;
}

export type AgentRecall = { namespace: string; k: number };

export interface Agent extends AgentSpec {
  tenant: string;
  name: string;
  created_at: string;
  updated_at: string;
}

// Types that are also event data are `type` aliases, not interfaces: an alias of plain
// JSON fields is assignable to JsonObject, so a typed event reaches the store uncast.

export type Usage = {
  input_tokens: number;
  output_tokens: number;
  model_calls: number;
  tool_calls: number;
};

export function emptyUsage(): Usage {
  return { input_tokens: 0, output_tokens: 0, model_calls: 0, tool_calls: 0 };
}

/** Why a run failed: a catalogue code (src/errors.ts) and a message for the caller. */
export type RunError = {
  code: RunErrorCode;
  message: string;
};

/** How a run ends: exactly what the one finalize transaction writes (with RunFigures). */
export type RunOutcome =
  | {
      status: 'succeeded';
      output: JsonObject;
      /** The text the thread context remembers for this turn. */
      reply_text: string;
      context_window: number;
      /** Texts of turns steered into the run (docs/agent-loop.md): the thread keeps them. */
      steered_texts?: string[];
      /** Compactions of this run, in order: the thread folds its oldest turns the same way. */
      compactions?: ThreadFold[];
      /** Token counts of the turn's messages (user, steered…, assistant), kept in the thread. */
      message_tokens?: number[];
    }
  | { status: 'failed'; error: RunError };

/** Counters of a run kept across attempts; checkpointed and written at finalize. */
export interface RunFigures {
  steps: number;
  usage: Usage;
  /** Run time across all attempts so far (timeout_ms spans resumes). */
  elapsed_ms: number;
}

/** A tool's error code as the model sees it in a `tool_result`. */
export type ToolErrorCode = ToolResultCode | ErrorCode | WebErrorCode;

/** What the model is told about a failed tool call. */
export type ToolResultError = {
  code: ToolErrorCode;
  message: string;
};

export interface DeliveryRequest {
  destination: string;
}

export interface Run {
  run_id: string;
  tenant: string;
  agent: string;
  scope: string;
  source: RunSource;
  input: JsonObject;
  request_id: string | null;
  delivery: DeliveryRequest | null;
  status: RunStatus;
  output: JsonObject | null;
  error: RunError | null;
  attempt: number;
  steps: number;
  usage: Usage;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export const ENTRY_KINDS = ['user', 'assistant', 'tool_result', 'note'] as const;
export type EntryKind = (typeof ENTRY_KINDS)[number];

export type ToolCall = {
  call_id: string;
  name: string;
  /** The raw argument text as the model produced it; parsed only when the tool runs. */
  arguments: string;
};

export type AssistantBody = {
  text: string;
  tool_calls: ToolCall[];
  usage: { input_tokens: number; output_tokens: number };
  finish_reason: string;
  model: string;
};

export type ToolResultBody = {
  call_id: string;
  name: string;
  ok: boolean;
  result?: JsonValue;
  error?: ToolResultError;
  duration_ms: number;
};

export type EntryBody =
  | { kind: 'user'; body: { text: string; payload: JsonObject; steer_id?: string } }
  | { kind: 'assistant'; body: AssistantBody }
  | { kind: 'tool_result'; body: ToolResultBody }
  | {
      kind: 'note';
      body: { text: string; compaction?: CompactionRecord; memory_flush?: MemoryFlushRecord };
    };

/** A memory flush before a compaction (src/runtime/memory-flush.ts; docs/compaction.md). */
export type MemoryFlushRecord = {
  /** The model step whose compaction it precedes, and the oldest turn to be folded. */
  step: number;
  from_run_id: string;
  through_run_id: string;
  /** `called`: the flush call's tool calls, recorded before they run; `done`: their results. */
  phase: 'called' | 'done';
  calls: ToolCall[];
  results?: { call_id: string; name: string; ok: boolean; error?: string }[];
};

/** What one compaction folded (the `context.compacted` event; docs/compaction.md). */
export type CompactionRecord = {
  /** The model step it happened before. */
  step: number;
  reason: 'budget' | 'context_length_exceeded';
  from_run_id: string;
  through_run_id: string;
  turns: number;
  messages: number;
  /** Estimated tokens of the model input before and after, and the budget. */
  tokens_before: number;
  tokens_after: number;
  context_tokens: number;
};

/** A thread's oldest turns, through `through_run_id`, replaced by `summary`. */
export type ThreadFold = { through_run_id: string; summary: string };

export type RunEntry = EntryBody & { run_id: string; seq: number; attempt: number; ts: string };

/** A persisted run event as read back (src/events.ts, the one event union). */
export type { TraceEvent } from './events.ts';

export interface ThreadMessage {
  role: 'user' | 'assistant';
  content: string;
  run_id: string;
  ts: string;
  /** Tokens of `content` (gpt-tokenizer), counted once when the turn was stored. */
  tokens?: number;
  /** true: a summary of folded older turns (docs/compaction.md). */
  summary?: true;
}

export interface Thread {
  scope: string;
  revision: number;
  turns: number;
  messages: ThreadMessage[];
  updated_at: string;
}

export interface ThreadSummary {
  scope: string;
  turns: number;
  revision: number;
  updated_at: string;
}

export const DELIVERY_STATUSES = ['pending', 'claimed', 'delivered', 'failed', 'dead'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
/** `result`: the run's final output; `approval`: a call waiting for a person (docs/approvals.md). */
export const DELIVERY_KINDS = ['result', 'approval'] as const;
export type DeliveryKind = (typeof DELIVERY_KINDS)[number];

export interface Delivery {
  delivery_id: string;
  tenant: string;
  run_id: string;
  destination: string;
  status: DeliveryStatus;
  attempt: number;
  idempotency_key: string;
  kind: DeliveryKind;
  /** The approval's call (kind `approval`); null for a result delivery. */
  call_id: string | null;
  next_attempt_at: string;
  claim_expires_at: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

export interface ClaimedDelivery {
  delivery_id: string;
  run_id: string;
  destination: string;
  kind: DeliveryKind;
  call_id: string | null;
  /**
   * kind `result`: the run's output. kind `approval`: the call to decide — `{call_id, tool,
   * arguments, step, agent, scope, requested_at, expires_at}`.
   */
  payload: JsonObject;
  attempt: number;
  claim_token: string;
  claim_expires_at: string;
  idempotency_key: string;
}

export type DeliveryOutcome = 'delivered' | 'retry' | 'failed';

// --- artifacts and schedules (built-in capabilities) ---

/** An artifact's metadata: what listings and tools show without the bytes. */
export interface ArtifactStat {
  path: string;
  content_type: string;
  size_bytes: number;
  /** Hex sha256 of the body; the HTTP ETag. */
  sha256: string;
  metadata: JsonObject;
  created_at: string;
  updated_at: string;
}

export interface Artifact extends ArtifactStat {
  body: Uint8Array;
}

/** When a schedule fires: exactly one of a cron line in a time zone, an interval, an instant. */
export type ScheduleTiming =
  | { kind: 'cron'; cron: string; timezone: string }
  | { kind: 'every'; every_ms: number }
  | { kind: 'at'; at: string };

export const MISFIRE_POLICIES = ['skip', 'run_once'] as const;
export type MisfirePolicy = (typeof MISFIRE_POLICIES)[number];

export interface Schedule {
  tenant: string;
  name: string;
  agent: string;
  scope: string;
  payload: JsonObject;
  cron: string | null;
  timezone: string | null;
  every_ms: number | null;
  at: string | null;
  misfire: MisfirePolicy;
  delivery: DeliveryRequest | null;
  enabled: boolean;
  next_fire_at: string | null;
  last_fired_at: string | null;
  last_run_id: string | null;
  last_error: string | null;
  /** Changes on every write; a fire computed from an older read is refused. */
  revision: number;
  created_at: string;
  updated_at: string;
}

// --- memory (docs/http-api.md, "Memory and presets") ---

/** One remembered fact of a (tenant, namespace). */
export interface MemoryFact {
  id: string;
  text: string;
  metadata: JsonObject;
  created_at: string;
  updated_at: string;
}

/** A search result: the fused RRF score and the rank on each side (null when absent). */
export interface MemorySearchResult {
  id: string;
  text: string;
  score: number;
  lexical_rank: number | null;
  semantic_rank: number | null;
}
