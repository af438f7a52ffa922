// The Store, split by concern (runs and the journal, tenants and tokens, agents and
// threads, schedules, deliveries, memory, artifacts; `Store` is their sum): every
// method that writes is one complete transaction inside the backend (docs/store.md).
// Nothing here is SQLite- or PostgreSQL-specific; one conformance suite
// (test/store-conformance/) runs against every backend. Consumers take only the
// interfaces they use. What the methods take and return is in shapes.ts.
//
// Clock: lease and due-time comparisons use the store's own clock (the database's
// `now()` on PostgreSQL, the process clock on SQLite, which owns its data dir).

import type {
  BudgetState,
  TenantBudget,
  UsageQuery,
  UsageRow,
  UsageTotals,
} from './rules/usage.ts';
import type { WebhookInfo, WebhookRecord } from './rules/webhooks.ts';
import type { EntryPage } from './rules/keyset.ts';
import type { PruneInput, PruneResult } from './rules/retention.ts';
import type { TenantDump } from './rules/tenant-export.ts';
import type {
  Agent,
  AgentSpec,
  Artifact,
  ArtifactStat,
  ClaimedDelivery,
  Delivery,
  EntryBody,
  JsonObject,
  MemoryFact,
  Run,
  RunEntry,
  Schedule,
  Tenant,
  Thread,
  ThreadSummary,
  TokenRecord,
  TraceEvent,
} from '../types.ts';
import type {
  Fence,
  Page,
  EnqueueRunInput,
  EnqueueResult,
  RunFilter,
  ClaimOptions,
  ClaimedRun,
  ProgressInput,
  FinalizeInput,
  DeliveryClaimInput,
  DeliveryAckInput,
  DeliveryFilter,
  TokenLookup,
  MigrationStatus,
  StoreStats,
  ArtifactWrite,
  ScheduleWrite,
  ScheduleOwner,
  ScheduleFilter,
  ScheduleFireInput,
  ScheduleFireResult,
  MemoryVector,
  MemoryPutInput,
  MemoryLexicalTerms,
  MemoryHit,
  MemoryEmbedderCount,
  MemoryStaleFact,
  MemoryVectorUpdate,
  ChangeListener,
  McpServerRecord,
  WasmToolInfo,
  WasmToolRecord,
  SecretInfo,
  PendingSteer,
  ForkRunInput,
  SchedulerStatus,
  Approval,
  ApprovalDecision,
  ApprovalRequest,
  PendingApproval,
} from './shapes.ts';

export type * from './shapes.ts';

/** What every backend is, opened: its health, schema, stats and change feed. */
export interface StoreLifecycle {
  readonly kind: 'sqlite' | 'postgres';
  /** A one-line description for the startup banner, without secrets. */
  readonly description: string;

  migrationStatus(): Promise<MigrationStatus>;
  ping(): Promise<void>;
  close(): Promise<void>;
  /** Every tenant's figures, or one tenant's. */
  stats(tenant?: string): Promise<StoreStats>;
}

/** Committed changes, for waiters, workers and SSE. */
export interface StoreChanges {
  /**
   * Listeners are called after the change committed. Returns an unsubscribe function.
   * With `runId`, the listener hears only that run's changes and those about no run
   * (`store.resync`, `resource.changed`).
   */
  subscribe(listener: ChangeListener, runId?: string): () => void;
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
  /**
   * `maxAgents` (tenant_limits.agents; absent: no quota): a create past it throws
   * QUOTA_EXCEEDED, exact under racing writers; a replace always goes ahead.
   */
  putAgent(
    tenant: string,
    name: string,
    spec: AgentSpec,
    maxAgents?: number,
  ): Promise<{ agent: Agent; created: boolean }>;
  getAgent(tenant: string, name: string): Promise<Agent | null>;
  /** By name, keyset-paged like listSchedules. */
  listAgents(tenant: string, limit: number, cursor?: string): Promise<Page<Agent>>;
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
   * `elapsedMs` (optional) also records the run time so far, so time an attempt spends
   * between checkpoints still counts toward timeout_ms when it crashes.
   */
  heartbeat(fence: Fence, leaseMs: number, elapsedMs?: number): Promise<boolean>;
  /**
   * Appends entries and events in one transaction. Throws LEASE_LOST when stale.
   * Returns the entries as stored (with their seq, attempt and ts), in order.
   */
  appendProgress(fence: Fence, progress: ProgressInput): Promise<RunEntry[]>;
  /** Every entry of the run, in order: for the worker resuming it (no tenant check). */
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
  /**
   * One page of the run's entries with seq after `afterSeq`, reading only that page;
   * null when the tenant has no such run.
   */
  getEntriesPage(
    tenant: string,
    runId: string,
    afterSeq: number,
    limit: number,
  ): Promise<EntryPage<RunEntry> | null>;
}

/** Steered turns and forks: runs that start from, or join, another run's journal. */
export interface RunBranchStore {
  /**
   * One fenced transaction at a step boundary: the turns steered at this run that are
   * still queued become user entries of its journal (`entryFor` builds each), are
   * recorded in run_steers and leave the queue. [] without a write when none wait.
   * Throws LEASE_LOST when the fence is stale.
   */
  takeSteers(fence: Fence, entryFor: (steer: PendingSteer) => EntryBody): Promise<RunEntry[]>;
  /**
   * A queued run in `scope` whose journal starts as a copy of the source run's entries
   * up to the fork point. Throws RUN_NOT_FOUND, VALIDATION_FAILED (at_step).
   */
  forkRun(input: ForkRunInput): Promise<Run>;
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
  /** Dead → pending, due now, attempts reset. Throws DELIVERY_NOT_FOUND, DELIVERY_NOT_DEAD. */
  retryDeadDelivery(tenant: string, deliveryId: string): Promise<Delivery>;
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

/** The scheduler's heartbeat: schedulers write it, the API reads it to warn. */
export interface SchedulerHeartbeatStore {
  /** Called by a running scheduler every few seconds; one row, the last writer wins. */
  recordSchedulerBeat(holder: string): Promise<void>;
  schedulerStatus(): Promise<SchedulerStatus>;
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
  /**
   * Enabled schedules with next_fire_at <= the store clock, at most `limit`, round-robin
   * over tenants (each tenant's oldest first; src/store/rules/tenant-fairness.ts).
   */
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

/** A tenant's MCP servers (docs/mcp.md); the spec and tools are opaque JSON here. */
export interface McpServerStore {
  /** Throws TENANT_NOT_FOUND. Replaces spec, tools and last_error together. */
  /**
   * `maxServers` (tenant_limits.mcp_servers; absent: no quota): a create past it throws
   * QUOTA_EXCEEDED, exact under racing writers; a replace always goes ahead.
   */
  putMcpServer(
    tenant: string,
    name: string,
    record: { spec: JsonObject; tools: JsonObject[]; last_error: string | null },
    maxServers?: number,
  ): Promise<{ server: McpServerRecord; created: boolean }>;
  getMcpServer(tenant: string, name: string): Promise<McpServerRecord | null>;
  /** Every server of the tenant (its tool catalog); the API lists them with listMcpServersPage. */
  listMcpServers(tenant: string): Promise<McpServerRecord[]>;
  /** By name, keyset-paged. */
  listMcpServersPage(
    tenant: string,
    limit: number,
    cursor?: string,
  ): Promise<Page<McpServerRecord>>;
  /** Every tenant's servers (rediscovery at startup). */
  listAllMcpServers(): Promise<McpServerRecord[]>;
  /** Records a rediscovery; false when the server is gone. */
  updateMcpServerDiscovery(
    tenant: string,
    name: string,
    discovery: { tools?: JsonObject[]; last_error: string | null },
  ): Promise<boolean>;
  deleteMcpServer(tenant: string, name: string): Promise<boolean>;
}

/** Tenant secrets: values go in, and come out only to the code that sends them. */
export interface SecretStore {
  /** Throws TENANT_NOT_FOUND; QUOTA_EXCEEDED for a create past `maxSecrets` (as putAgent). */
  putSecret(
    tenant: string,
    name: string,
    value: string,
    maxSecrets?: number,
  ): Promise<{ created: boolean }>;
  /** By name, keyset-paged; names and times only. */
  listSecrets(tenant: string, limit: number, cursor?: string): Promise<Page<SecretInfo>>;
  getSecretValue(tenant: string, name: string): Promise<string | null>;
  deleteSecret(tenant: string, name: string): Promise<boolean>;
}

/** A tenant's signed webhooks (docs/channels.md, Webhooks). */
export interface WebhookStore {
  /**
   * Throws TENANT_NOT_FOUND; QUOTA_EXCEEDED for a create past `maxWebhooks` (as
   * putAgent). Creates with `secret`, or changes an existing one's URL.
   */
  putWebhook(
    tenant: string,
    name: string,
    url: string,
    secret: string,
    maxWebhooks?: number,
  ): Promise<{ webhook: WebhookInfo; created: boolean }>;
  /** With the signing secret: for the delivery worker only. */
  getWebhook(tenant: string, name: string): Promise<WebhookRecord | null>;
  /** By name, keyset-paged. */
  listWebhooks(tenant: string, limit: number, cursor?: string): Promise<Page<WebhookInfo>>;
  /** Null when there is no such webhook. */
  rotateWebhookSecret(tenant: string, name: string, secret: string): Promise<WebhookInfo | null>;
  deleteWebhook(tenant: string, name: string): Promise<boolean>;
}

/** A tenant's WebAssembly tools (docs/wasm-tools.md); the manifest is opaque JSON here. */
export interface WasmToolStore {
  /**
   * Throws TENANT_NOT_FOUND; QUOTA_EXCEEDED for a create past `maxTools` (as putAgent).
   * Replaces manifest and module together.
   */
  putWasmTool(
    tenant: string,
    name: string,
    record: { manifest: JsonObject; module: Uint8Array },
    maxTools?: number,
  ): Promise<{ tool: WasmToolInfo; created: boolean }>;
  /** With the module bytes. */
  getWasmTool(tenant: string, name: string): Promise<WasmToolRecord | null>;
  /** Without the module bytes; every tool of the tenant (its tool catalog). */
  listWasmTools(tenant: string): Promise<WasmToolInfo[]>;
  /** Without the module bytes, by name, keyset-paged (the API's list). */
  listWasmToolsPage(tenant: string, limit: number, cursor?: string): Promise<Page<WasmToolInfo>>;
  deleteWasmTool(tenant: string, name: string): Promise<boolean>;
}

/** Approvals: tool calls that wait for a person (docs/approvals.md). */
export interface ApprovalStore {
  /**
   * One fenced transaction: the pending approval, `approval.requested` + `run.released`,
   * and the run `waiting` with no lease (its lane stays held). Throws LEASE_LOST.
   */
  requestApproval(fence: Fence, request: ApprovalRequest): Promise<Approval>;
  /**
   * One transaction: the decision, `approval.decided`, and the run `queued` again
   * (claimable, first in its lane). Throws RUN_NOT_FOUND, APPROVAL_NOT_FOUND, and
   * APPROVAL_DECIDED for a second decision or a run that no longer waits.
   */
  decideApproval(
    tenant: string,
    runId: string,
    callId: string,
    decision: ApprovalDecision,
  ): Promise<Approval>;
  /** The tenant's pending approvals, oldest first, each with its run's input text. */
  listPendingApprovals(tenant: string, limit: number): Promise<PendingApproval[]>;
  /** Every approval of a run, in request order; null when the run is not the tenant's. */
  listRunApprovals(tenant: string, runId: string): Promise<Approval[] | null>;
  /**
   * The timeout sweep: up to `limit` pending approvals past expires_at become
   * `timed_out` and their runs claimable, each as a decision would. Returns how many.
   */
  expireApprovals(limit: number): Promise<number>;
}

/** Retention (docs/store.md, "Retention"): a finished run's history, pruned in batches. */
export interface RetentionStore {
  /**
   * One bounded batch in its own transaction: deletes at most `limit` rows of the part
   * (trace events, journal entries, or whole runs) of finished runs past the cutoff,
   * walking them oldest first from `after`. Never touches a queued, running or waiting
   * run, nor a run with a delivery still to deliver (part `runs`).
   */
  pruneRunHistory(input: PruneInput): Promise<PruneResult>;
}

/** The whole store: every concern. Consumers take only the parts they use. */
export interface Store
  extends
    StoreLifecycle,
    StoreChanges,
    TenantStore,
    AgentStore,
    RunStore,
    RunBranchStore,
    DeliveryStore,
    ArtifactStore,
    ScheduleStore,
    SchedulerHeartbeatStore,
    MemoryStore,
    McpServerStore,
    SecretStore,
    WebhookStore,
    WasmToolStore,
    ApprovalStore,
    RetentionStore,
    UsageStore,
    TenantImportTarget {}

/**
 * `keel import` (docs/operations.md, "Moving a tenant"): writes a checked tenant export
 * in one transaction. Throws CONFLICT, writing nothing, when the tenant exists; any
 * other failure (a row the target refuses) rolls back every row.
 */
export interface TenantImportTarget {
  /** Returns the number of rows written. */
  importTenant(dump: TenantDump): Promise<number>;
}

/** Model usage and budgets (src/store/rules/usage.ts, docs/http-api.md, Usage). */
export interface UsageStore {
  /** Totals of the tenant's usage ledger over [from, to] (UTC days), grouped. */
  getUsage(tenant: string, query: UsageQuery): Promise<{ rows: UsageRow[]; total: UsageTotals }>;
  /** The budget, today's usage of the tenant and the run's usage: a step boundary's check. */
  getBudgetState(tenant: string, runId: string): Promise<BudgetState>;
  getTenantBudget(tenant: string): Promise<TenantBudget>;
  /** Throws TENANT_NOT_FOUND. */
  putTenantBudget(tenant: string, budget: TenantBudget): Promise<TenantBudget>;
}
