// Shared domain types. Wire names are snake_case because these objects are what the
// HTTP API returns; the store keeps the same shape so nothing is translated twice.

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
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

/** Every field of spec/http-api.md's agent table, with defaults already applied. */
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
}

export interface Agent extends AgentSpec {
  tenant: string;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  model_calls: number;
  tool_calls: number;
}

export function emptyUsage(): Usage {
  return { input_tokens: 0, output_tokens: 0, model_calls: 0, tool_calls: 0 };
}

export interface RunError {
  code: string;
  message: string;
}

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

export interface ToolCall {
  call_id: string;
  name: string;
  /** The raw argument text as the model produced it; parsed only when the tool runs. */
  arguments: string;
}

export interface AssistantBody {
  text: string;
  tool_calls: ToolCall[];
  usage: { input_tokens: number; output_tokens: number };
  finish_reason: string;
  model: string;
}

export interface ToolResultBody {
  call_id: string;
  name: string;
  ok: boolean;
  result?: JsonValue;
  error?: RunError;
  duration_ms: number;
}

export type EntryBody =
  | { kind: 'user'; body: { text: string; payload: JsonObject } }
  | { kind: 'assistant'; body: AssistantBody }
  | { kind: 'tool_result'; body: ToolResultBody }
  | { kind: 'note'; body: { text: string } };

export type RunEntry = EntryBody & { run_id: string; seq: number; attempt: number; ts: string };

export interface TraceEvent {
  seq: number;
  ts: string;
  type: string;
  data: JsonObject;
}

export interface ThreadMessage {
  role: 'user' | 'assistant';
  content: string;
  run_id: string;
  ts: string;
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

export interface Delivery {
  delivery_id: string;
  tenant: string;
  run_id: string;
  destination: string;
  status: DeliveryStatus;
  attempt: number;
  idempotency_key: string;
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

// --- memory (spec/memory.md) ---

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
