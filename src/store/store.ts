// The Store, split by concern (runs and the journal, tenants and tokens, agents and
// threads, schedules, deliveries, memory, artifacts; `Store` is their sum): every
// method that writes is one complete transaction inside the backend (docs/store.md).
// Nothing here is SQLite- or PostgreSQL-specific; one conformance suite
// (test/store-conformance/) runs against every backend. Consumers take only the
// interfaces they use.
//
// Clock: lease and due-time comparisons use the store's own clock (the database's
// `now()` on PostgreSQL, the process clock on SQLite, which owns its data dir).

import type {
  Agent,
  AgentSpec,
  Artifact,
  ArtifactStat,
  ClaimedDelivery,
  Delivery,
  DeliveryOutcome,
  DeliveryRequest,
  DeliveryStatus,
  EntryBody,
  JsonObject,
  MemoryFact,
  MisfirePolicy,
  Run,
  RunEntry,
  RunError,
  RunSource,
  RunStatus,
  Schedule,
  ScheduleTiming,
  Tenant,
  Thread,
  ThreadSummary,
  TokenRecord,
  TraceEvent,
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
  on_busy: 'enqueue' | 'reject';
}

export interface EnqueueResult {
  run: Run;
  deduplicated: boolean;
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

export type FinalizeInput =
  | {
      status: 'succeeded';
      output: JsonObject;
      /** The text the thread context remembers for this turn. */
      reply_text: string;
      steps: number;
      usage: Usage;
      elapsed_ms: number;
      context_window: number;
    }
  | { status: 'failed'; error: RunError; steps: number; usage: Usage; elapsed_ms: number };

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

export interface StoreStats {
  runs_by_status: Record<RunStatus, number>;
  deliveries_by_status: Record<DeliveryStatus, number>;
}

// --- artifacts and schedules (built-in capabilities) ---

export interface ArtifactWrite {
  body: Uint8Array;
  content_type: string;
  metadata: JsonObject;
}

export interface ScheduleWrite {
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
  | { kind: 'run.terminal'; tenant: string; run_id: string; status: RunStatus };

export type ChangeListener = (change: StoreChange) => void;

/** What every backend is, opened: its health, schema, stats and change feed. */
export interface StoreLifecycle {
  readonly kind: 'sqlite' | 'postgres';
  /** A one-line description for the startup banner, without secrets. */
  readonly description: string;

  migrationStatus(): Promise<MigrationStatus>;
  ping(): Promise<void>;
  close(): Promise<void>;
  stats(): Promise<StoreStats>;
}

/** Committed changes, for waiters, workers and SSE. */
export interface StoreChanges {
  /** Listeners are called after the change committed. Returns an unsubscribe function. */
  subscribe(listener: ChangeListener): () => void;
}

export interface TenantStore {
  createTenant(name: string, metadata: JsonObject): Promise<{ tenant: Tenant; created: boolean }>;
  getTenant(name: string): Promise<Tenant | null>;
  listTenants(): Promise<Tenant[]>;
  /** Throws TENANT_NOT_FOUND, or CONFLICT when if_updated_at no longer matches. */
  updateTenant(name: string, metadata: JsonObject, ifUpdatedAt?: string): Promise<Tenant>;
  /** Removes every resource of the tenant and cancels its active runs, in one transaction. */
  deleteTenant(name: string): Promise<boolean>;
  createToken(token: TokenRecord & { hash: string }): Promise<TokenRecord>;
  listTokens(tenant: string): Promise<TokenRecord[]>;
  deleteToken(tenant: string, id: string): Promise<boolean>;
  findToken(id: string): Promise<TokenLookup | null>;
}

/** Agents and the threads (per-scope conversation context) their runs build. */
export interface AgentStore {
  putAgent(
    tenant: string,
    name: string,
    spec: AgentSpec,
  ): Promise<{ agent: Agent; created: boolean }>;
  getAgent(tenant: string, name: string): Promise<Agent | null>;
  listAgents(tenant: string): Promise<Agent[]>;
  /** Fails the agent's queued and running runs with AGENT_NOT_FOUND (their lanes free). */
  deleteAgent(tenant: string, name: string): Promise<boolean>;

  listThreads(
    tenant: string,
    agent: string,
    limit: number,
    cursor?: string,
  ): Promise<Page<ThreadSummary>>;
  getThread(tenant: string, agent: string, scope: string): Promise<Thread | null>;
  deleteThread(tenant: string, agent: string, scope: string): Promise<boolean>;
}

/** Runs, their leases (fencing) and their journal (entries and trace events). */
export interface RunStore {
  /** Throws TENANT_NOT_FOUND, AGENT_NOT_FOUND, IDEMPOTENCY_KEY_REUSED, SCOPE_BUSY. */
  enqueueRun(input: EnqueueRunInput): Promise<EnqueueResult>;
  getRun(tenant: string, runId: string): Promise<Run | null>;
  listRuns(tenant: string, filter: RunFilter, limit: number, cursor?: string): Promise<Page<Run>>;
  /**
   * Claims the oldest claimable run: a queued run that is first in its free lane, or a
   * running run whose lease expired (reclaim). attempt + 1, new lease, `run.claimed`.
   */
  claimNextRun(options: ClaimOptions): Promise<ClaimedRun | null>;
  /**
   * Extends the lease to now + leaseMs; false when the fence is stale, the run ended or
   * was cancelled. leaseMs = 0 releases the lease: the run is claimable at once (drain).
   */
  heartbeat(fence: Fence, leaseMs: number): Promise<boolean>;
  /** Appends entries and events in one transaction. Throws LEASE_LOST when stale. */
  appendProgress(fence: Fence, progress: ProgressInput): Promise<void>;
  loadEntries(runId: string): Promise<RunEntry[]>;
  /**
   * The one finalization transaction: status, output or error, terminal trace event,
   * thread context (succeeded only) and delivery row (succeeded with a destination).
   * Throws LEASE_LOST when the attempt is stale or the run is no longer running.
   */
  finalizeRun(fence: Fence, input: FinalizeInput): Promise<Run>;
  /** queued/running → cancelled with a trace event; a terminal run is returned unchanged. */
  cancelRun(tenant: string, runId: string, reason: string | null): Promise<Run | null>;
  getTrace(
    tenant: string,
    runId: string,
    afterSeq: number,
    limit: number,
  ): Promise<TraceEvent[] | null>;
}

/** The delivery outbox: rows written by finalize, claimed and acked by consumers. */
export interface DeliveryStore {
  listDeliveries(
    tenant: string,
    filter: DeliveryFilter,
    limit: number,
    cursor?: string,
  ): Promise<Page<Delivery>>;
  claimDeliveries(tenant: string, input: DeliveryClaimInput): Promise<ClaimedDelivery[]>;
  /** Throws DELIVERY_NOT_FOUND, CLAIM_TOKEN_MISMATCH, CLAIM_EXPIRED, DELIVERY_NOT_CLAIMED. */
  ackDelivery(tenant: string, deliveryId: string, input: DeliveryAckInput): Promise<Delivery>;
}

export interface ArtifactStore {
  /** Throws TENANT_NOT_FOUND. Paths are validated by the caller (artifactPathProblem). */
  putArtifact(
    tenant: string,
    path: string,
    input: ArtifactWrite,
  ): Promise<{ artifact: ArtifactStat; created: boolean }>;
  getArtifact(tenant: string, path: string): Promise<Artifact | null>;
  /** Keyset paged by path; prefix is a plain byte prefix of the path. */
  listArtifacts(
    tenant: string,
    prefix: string,
    limit: number,
    cursor?: string,
  ): Promise<Page<ArtifactStat>>;
  deleteArtifact(tenant: string, path: string): Promise<boolean>;
}

export interface ScheduleStore {
  /**
   * Creates or replaces a schedule. Throws TENANT_NOT_FOUND, AGENT_NOT_FOUND, and
   * SCHEDULE_NOT_FOUND when `owner` is given and the existing schedule is someone else's.
   */
  putSchedule(
    tenant: string,
    name: string,
    input: ScheduleWrite,
    owner?: ScheduleOwner,
  ): Promise<{ schedule: Schedule; created: boolean }>;
  getSchedule(tenant: string, name: string): Promise<Schedule | null>;
  listSchedules(
    tenant: string,
    filter: ScheduleFilter,
    limit: number,
    cursor?: string,
  ): Promise<Page<Schedule>>;
  /** With `owner`, only that agent and scope's schedule is deleted (else false). */
  deleteSchedule(tenant: string, name: string, owner?: ScheduleOwner): Promise<boolean>;
  /** Enabled schedules with next_fire_at <= the store clock, oldest first, at most `limit`. */
  dueSchedules(limit: number): Promise<Schedule[]>;
  /**
   * One fire in one transaction: re-checks the schedule, enqueues the run (deduplicated
   * by its request_id), advances next_fire_at. An agent that is gone disables the
   * schedule with last_error instead. Fault point `schedule.fire.before_commit`.
   */
  fireSchedule(input: ScheduleFireInput): Promise<ScheduleFireResult>;
}

/** Memory facts, their search indexes and vectors (docs/store.md, "Memory"). */
export interface MemoryStore {
  /** Creates or replaces a fact with its vector. Throws TENANT_NOT_FOUND. */
  putMemory(input: MemoryPutInput): Promise<{ fact: MemoryFact; created: boolean }>;
  getMemory(tenant: string, namespace: string, id: string): Promise<MemoryFact | null>;
  /** Removes the fact with its index entries and vector. */
  deleteMemory(tenant: string, namespace: string, id: string): Promise<boolean>;
  /** Keyset by id; the cursor is bound to tenant + namespace (else VALIDATION_FAILED). */
  listMemory(
    tenant: string,
    namespace: string,
    limit: number,
    cursor?: string,
  ): Promise<Page<MemoryFact>>;
  /** Full-text candidates (bm25 order, then id), at most `pool`. */
  searchMemoryLexical(
    tenant: string,
    namespace: string,
    terms: MemoryLexicalTerms,
    pool: number,
  ): Promise<MemoryHit[]>;
  /** Exact cosine KNN among vectors of `vector.embedder` only, at most `pool`. */
  searchMemorySemantic(
    tenant: string,
    namespace: string,
    vector: MemoryVector,
    pool: number,
  ): Promise<MemoryHit[]>;
  /** Facts of the namespace whose vector is not from `embedder`; [] when none. */
  staleMemoryCounts(
    tenant: string,
    namespace: string,
    embedder: string,
  ): Promise<MemoryEmbedderCount[]>;
  /** All tenants: facts not embedded by `embedder`, key order, after `afterKey`. */
  listStaleMemory(embedder: string, limit: number, afterKey: number): Promise<MemoryStaleFact[]>;
  countStaleMemory(embedder: string): Promise<number>;
  /** One transaction; returns how many were written (changed facts are skipped). */
  setMemoryVectors(updates: MemoryVectorUpdate[]): Promise<number>;
}

/** The whole store: every concern. Consumers take only the parts they use. */
export interface Store
  extends
    StoreLifecycle,
    StoreChanges,
    TenantStore,
    AgentStore,
    RunStore,
    DeliveryStore,
    ArtifactStore,
    ScheduleStore,
    MemoryStore {}
