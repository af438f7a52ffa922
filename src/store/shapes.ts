// The shapes the store's methods take and return (store.ts declares the methods): runs
// and their journal, deliveries, tokens, schedules, artifacts, memory, and the change
// notifications. Backend-neutral; docs/store.md is the contract.

import type {
  Agent,
  DeliveryOutcome,
  DeliveryRequest,
  DeliveryStatus,
  EntryBody,
  JsonObject,
  MisfirePolicy,
  Run,
  RunFigures,
  RunOutcome,
  RunSource,
  RunStatus,
  Schedule,
  ScheduleTiming,
  Usage,
} from '../types.ts';

/** Identifies one attempt of one run: every runtime write carries it (fencing). */
export interface Fence {
  run_id: string;
  attempt: number;
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export interface NewEvent {
  type: string;
  data: JsonObject;
  /**
   * A JSON text stored as data's `raw` member, spliced in as it is (a model response's
   * raw exchange, whose request body is the text that was sent): never parsed here.
   */
  raw_json?: string;
}

export interface EnqueueRunInput {
  run_id: string;
  tenant: string;
  agent: string;
  scope: string;
  source: RunSource;
  input: JsonObject;
  request_id: string | null;
  /** Hash of (agent, scope, payload, delivery): a replayed request_id must match it. */
  fingerprint: string;
  delivery: DeliveryRequest | null;
  /**
   * What to do when the lane already has a run: enqueue behind it, reject (SCOPE_BUSY),
   * steer into the running run, or interrupt it (docs/agent-loop.md, "Steering").
   */
  on_busy: 'enqueue' | 'reject' | 'steer' | 'interrupt';
  /**
   * The tenant's queued-run limit, checked in the enqueue's transaction: a new run past
   * it fails with RATE_LIMITED (a replayed request_id still finds its run). Absent: none.
   */
  max_queued?: number | null;
}

export interface EnqueueResult {
  run: Run;
  deduplicated: boolean;
  /**
   * on_busy=steer found a running run: `run` is that run, and the turn waits as
   * `steer_id` until the run takes it at a step boundary (or runs next under that id).
   */
  steer_id?: string;
}

/** A steered turn a running run takes into its journal (docs/agent-loop.md). */
export interface PendingSteer {
  steer_id: string;
  input: JsonObject;
}

/** POST T/runs/:id/fork (docs/agent-loop.md, "Fork"). */
export interface ForkRunInput {
  tenant: string;
  source_run_id: string;
  /** The new run's id. */
  run_id: string;
  /** Keep the user entry and the first at_step model steps with their tool results. */
  at_step: number;
  /** Replaces the user message (the run's first user entry and its input). */
  payload: JsonObject | null;
  scope: string;
  /** The user entry the payload becomes (built by the runtime). */
  user_entry: EntryBody | null;
  fingerprint: string;
  /** Dedup as for turns: a replay with the same fork answers its run (fingerprint). */
  request_id?: string | null;
  /** The tenant's queued-run quota, as for turns (`tenant_limits.queued_runs`). */
  max_queued?: number | null;
}

export interface RunFilter {
  agent?: string;
  scope?: string;
  status?: RunStatus;
  source?: RunSource;
}

export interface ClaimOptions {
  /** Who holds the lease (process id + worker slot); shows in `run.claimed` events. */
  owner: string;
  lease_ms: number;
  /** At most this many running runs per tenant (src/store/rules/tenant-fairness.ts). */
  max_running_per_tenant?: number | null;
  /**
   * false: the cap binds only while the store holds more than one tenant (the default
   * cap, so a single-tenant deployment uses every slot). Absent or true: always.
   */
  running_cap_when_alone?: boolean;
}

/** A claimed run with the agent snapshot taken in the same transaction. */
export interface ClaimedRun {
  run: Run;
  /** null when the agent was deleted after the run was queued. */
  agent: Agent | null;
  /** Wall time already spent by earlier attempts (timeout_ms spans resumes). */
  elapsed_ms: number;
}

export interface ProgressInput {
  entries?: EntryBody[];
  events?: NewEvent[];
  steps?: number;
  usage?: Usage;
  /**
   * Run time so far across all attempts (earlier attempts' elapsed_ms + this attempt's);
   * stored as is, so a resumed run keeps its deadline.
   */
  elapsed_ms?: number;
}

/** The one finalize transaction writes the run's outcome and its final figures. */
export type FinalizeInput = RunOutcome & RunFigures;

export interface DeliveryClaimInput {
  limit: number;
  destination_prefix?: string;
  lease_ms: number;
  max_attempts: number;
}

export interface DeliveryAckInput {
  claim_token: string;
  outcome: DeliveryOutcome;
  error?: string;
  retry_after_ms?: number;
  max_attempts: number;
}

export interface DeliveryFilter {
  status?: DeliveryStatus;
  destination_prefix?: string;
  run_id?: string;
}

export interface TokenLookup {
  id: string;
  tenant: string;
  hash: string;
}

export interface MigrationStatus {
  current: number;
  latest: number;
}

/** What the no-scheduler warning reads (docs/scale-out.md, No scheduler running). */
export interface SchedulerStatus {
  /** The store's clock, ms. */
  now: number;
  /** The latest scheduler heartbeat, ms; null when no scheduler ever ran on this store. */
  last_beat_at: number | null;
  /** Enabled schedules whose next_fire_at has passed. */
  due: number;
  /** The oldest next_fire_at among them, ms; null when none is due. */
  oldest_due_at: number | null;
}

export interface StoreStats {
  runs_by_status: Record<RunStatus, number>;
  deliveries_by_status: Record<DeliveryStatus, number>;
  /** Creation time (epoch ms) of the oldest queued run; null when none is queued. */
  oldest_queued_ms: number | null;
  /** Schedules whose last fire recorded an error. */
  schedules_failing: number;
}

// --- artifacts and schedules (built-in capabilities) ---

export interface ArtifactWrite {
  /**
   * The tenant's artifact_bytes quota, checked in the write's transaction against the
   * bytes this write adds (QUOTA_EXCEEDED past it). Absent: none.
   */
  max_bytes?: number | null;
  body: Uint8Array;
  content_type: string;
  metadata: JsonObject;
}

export interface ScheduleWrite {
  /**
   * The tenant's schedule quota, checked in the write's transaction when this write
   * creates a schedule (QUOTA_EXCEEDED past it). Absent: none.
   */
  max_schedules?: number | null;
  agent: string;
  scope: string;
  payload: JsonObject;
  timing: ScheduleTiming;
  misfire: MisfirePolicy;
  enabled: boolean;
  delivery: DeliveryRequest | null;
  /** Computed by the caller from the timing (the store never parses cron lines). */
  next_fire_at: string | null;
}

/** The calling agent and scope of a schedule tool: it may only see and touch its own. */
export interface ScheduleOwner {
  agent: string;
  scope: string;
}

export interface ScheduleFilter {
  agent?: string;
  scope?: string;
}

export type ScheduleFireInput =
  | {
      /** A due fire: refused unless the row still has this revision and next_fire_at. */
      mode: 'due';
      tenant: string;
      name: string;
      revision: number;
      expected_next_fire_at: string;
      /** null: a misfire skipped without a run. */
      run: EnqueueRunInput | null;
      /** The new next_fire_at; null disables the schedule (a fired `at`, no future time). */
      next_fire_at: string | null;
      /** Recorded as last_error (null clears it). */
      note: string | null;
    }
  | {
      /** POST …/trigger: a run now; next_fire_at and enabled stay as they are. */
      mode: 'manual';
      tenant: string;
      name: string;
      run: EnqueueRunInput;
    };

export interface ScheduleFireResult {
  /** stale: another fire or a write got there first; nothing was changed. */
  outcome: 'fired' | 'skipped' | 'stale' | 'agent_missing';
  run: Run | null;
  deduplicated: boolean;
  schedule: Schedule | null;
}

// --- memory (docs/store.md, "Memory") ---

/** A vector and the id of the embedder that made it; its length is its dimension. */
export interface MemoryVector {
  embedder: string;
  values: Float32Array;
}

export interface MemoryPutInput {
  /**
   * The tenant's memory_bytes quota, checked in the write's transaction against the
   * bytes this write adds (QUOTA_EXCEEDED past it). Absent: none.
   */
  max_bytes?: number | null;
  tenant: string;
  namespace: string;
  id: string;
  text: string;
  metadata: JsonObject;
  vector: MemoryVector;
}

/** Search terms, already split: the backend quotes them (no query syntax gets through). */
export interface MemoryLexicalTerms {
  /** Words of spaced scripts, for the word index. */
  words: string[];
  /** Runs of scripts written without spaces (CJK …), matched as substrings. */
  phrases: string[];
}

/** One entry of a ranked candidate list, best first. */
export interface MemoryHit {
  id: string;
  text: string;
  /** Semantic hits only: cosine similarity of the fact's vector to the query's (−1…1). */
  similarity?: number;
}

/** How many facts carry vectors of one embedder (embedder null: no vector yet). */
export interface MemoryEmbedderCount {
  embedder: string | null;
  dim: number | null;
  count: number;
}

/** A fact to re-embed; `key` and `version` are opaque to the caller. */
export interface MemoryStaleFact {
  key: number;
  tenant: string;
  namespace: string;
  id: string;
  text: string;
  version: number;
}

export interface MemoryVectorUpdate {
  key: number;
  /** The fact's version when it was read: a fact changed since then is skipped. */
  version: number;
  vector: MemoryVector;
}

/** Changes other parts of the process (waiters, workers, SSE) wake up on. */
export type StoreChange =
  | { kind: 'run.queued'; tenant: string; run_id: string }
  | { kind: 'run.event'; tenant: string; run_id: string; seq: number }
  | { kind: 'run.terminal'; tenant: string; run_id: string; status: RunStatus }
  /**
   * A delivery became due: a run's result or an approval request, for `destination`
   * (absent when a notification from another process did not carry it: wake anyway).
   */
  | { kind: 'delivery.due'; tenant: string; run_id: string; destination?: string }
  /**
   * About no run in particular: changes may have been missed (PostgreSQL's LISTEN
   * connection came back), so every subscriber re-reads what it watches.
   */
  | { kind: 'store.resync'; tenant: null; run_id: null }
  /**
   * A named thing of a tenant was written or removed (src/store/rules/resource-changes.ts):
   * lists showing it (the console) re-read. About no run: run_id is null.
   */
  | {
      kind: 'resource.changed';
      tenant: string;
      run_id: null;
      resource: ChangedResource;
      name: string;
    };

/** What a `resource.changed` change is about. */
export type ChangedResource = 'agent' | 'schedule' | 'delivery' | 'mcp_server' | 'wasm_tool';

export type ChangeListener = (change: StoreChange) => void;

/**
 * An MCP server of a tenant as stored (docs/mcp.md). The store keeps the tenant's spec
 * and the discovered tools as opaque JSON; src/mcp gives them meaning.
 */
export interface McpServerRecord {
  tenant: string;
  name: string;
  spec: JsonObject;
  /** The tools the server listed at its last successful discovery. */
  tools: JsonObject[];
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

/** A tenant secret without its value: what listings return. */
export interface SecretInfo {
  name: string;
  created_at: string;
  updated_at: string;
}

/**
 * A WebAssembly tool of a tenant as listed (docs/wasm-tools.md): the manifest is opaque
 * JSON here (src/wasm gives it meaning); the module bytes are left out.
 */
export interface WasmToolInfo {
  tenant: string;
  name: string;
  manifest: JsonObject;
  /** Hex SHA-256 of the stored module: the compiled-module cache key. */
  sha256: string;
  module_bytes: number;
  created_at: string;
  updated_at: string;
}

/** With the module as keel runs it (memory maximum already rewritten). */
export interface WasmToolRecord extends WasmToolInfo {
  module: Uint8Array;
}

/** Where an approval stands (docs/approvals.md). */
export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'timed_out' | 'cancelled';

/** A tool call that waits (or waited) for a person's decision. */
export interface Approval {
  run_id: string;
  call_id: string;
  tenant: string;
  agent: string;
  scope: string;
  /** The step (1-based) of the assistant entry that made the call. */
  step: number;
  tool: string;
  /** The call's argument text, as the model sent it. */
  arguments: string;
  status: ApprovalStatus;
  note: string | null;
  requested_at: string;
  expires_at: string | null;
  decided_at: string | null;
}

/** A pending approval as a person is shown it: with what the run was asked. */
export interface PendingApproval extends Approval {
  /**
   * The run's input as text — its `text`, else the input as JSON — cut to
   * INPUT_TEXT_MAX characters with a trailing `…` (src/store/rules/approvals.ts).
   */
  input_text: string;
}

/** What a run attempt asks for when a call needs approval (fenced). */
export interface ApprovalRequest {
  step: number;
  call: { call_id: string; name: string; arguments: string };
  /** The agent's approval_timeout_ms; null = waits until decided or cancelled. */
  timeout_ms: number | null;
}

export interface ApprovalDecision {
  decision: 'approve' | 'deny';
  note: string | null;
}
