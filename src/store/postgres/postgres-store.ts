// The Store interface on a pg pool: every write is one BEGIN … COMMIT on one pooled
// client (context.ts), reads are single statements on the pool, and a dedicated
// LISTEN connection brings other processes' changes to this process's subscribers.

import type { TenantDump } from '../rules/tenant-export.ts';
import { importPostgresTenant } from './tenant-export.ts';
import { DELIVERY_STATUSES, RUN_STATUSES } from '../../types.ts';
import type {
  Agent,
  AgentSpec,
  Artifact,
  ArtifactStat,
  ClaimedDelivery,
  Delivery,
  DeliveryStatus,
  EntryBody,
  JsonObject,
  MemoryFact,
  Run,
  RunEntry,
  RunStatus,
  Schedule,
  Tenant,
  Thread,
  ThreadSummary,
  TokenRecord,
  TraceEvent,
} from '../../types.ts';
import type {
  ArtifactWrite,
  ChangeListener,
  ClaimedRun,
  ClaimOptions,
  DeliveryAckInput,
  DeliveryClaimInput,
  DeliveryFilter,
  EnqueueResult,
  EnqueueRunInput,
  Fence,
  FinalizeInput,
  MemoryEmbedderCount,
  MemoryHit,
  MemoryLexicalTerms,
  MemoryPutInput,
  MemoryStaleFact,
  MemoryVector,
  MemoryVectorUpdate,
  MigrationStatus,
  Page,
  ProgressInput,
  RunFilter,
  ScheduleFilter,
  ScheduleFireInput,
  ScheduleFireResult,
  ScheduleOwner,
  ScheduleWrite,
  SchedulerStatus,
  Store,
  StoreStats,
  TokenLookup,
  McpServerRecord,
  WasmToolInfo,
  WasmToolRecord,
  SecretInfo,
  PendingSteer,
  ForkRunInput,
} from '../store.ts';
import * as approvals from '../repositories/approvals.ts';
import type { Approval, ApprovalDecision, ApprovalRequest, PendingApproval } from '../shapes.ts';
import * as artifacts from '../repositories/artifacts.ts';
import * as steering from '../repositories/steering.ts';
import * as retention from '../repositories/retention.ts';
import type { PruneInput, PruneResult } from '../rules/retention.ts';
import type { PgContext } from './context.ts';
import * as deliveries from '../repositories/deliveries.ts';
import type { ChangeListenerConnection } from './listener.ts';
import type { PgLiveChannel } from './live-channel.ts';
import type { WebhookInfo, WebhookRecord } from '../rules/webhooks.ts';
import type { EntryPage } from '../rules/keyset.ts';
import * as mcp from '../repositories/mcp.ts';
import * as wasmTools from '../repositories/wasm-tools.ts';
import { moduleDigest } from '../rules/wasm-tools.ts';
import * as webhooks from '../repositories/webhooks.ts';
import { read, write, writeAround } from './steps.ts';
import * as memory from './memory.ts';
import * as sharedMemory from '../repositories/memory.ts';
import * as memorySearch from './memory-search.ts';
import type { Migration } from './migrations.ts';
import { migrationReport } from './migrations.ts';
import * as runWrites from '../repositories/run-writes.ts';
import * as runs from './runs.ts';
import * as sharedRuns from '../repositories/runs.ts';
import * as heartbeat from '../repositories/scheduler-heartbeat.ts';
import * as schedules from './schedules.ts';
import * as sharedSchedules from '../repositories/schedules.ts';
import * as tenants from '../repositories/tenants.ts';
import * as agents from '../repositories/agents.ts';
import * as threads from '../repositories/threads.ts';
import * as trace from '../repositories/trace.ts';
import * as usage from '../repositories/usage.ts';
import type * as usageRules from '../rules/usage.ts';

/** What the backend found at open: settings read back and optional extensions. */
export interface PostgresFeatures {
  synchronous_commit: string;
  transaction_isolation: string;
  pgvector: boolean;
  pg_trgm: boolean;
  server_version: string;
}

export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  private closed = false;

  constructor(
    private readonly ctx: PgContext,
    private readonly listener: ChangeListenerConnection,
    /** Live-only messages between processes (model.delta for SSE in a split deployment). */
    readonly live: PgLiveChannel,
    private readonly migrations: readonly Migration[],
    readonly schema: string,
    readonly features: PostgresFeatures,
    readonly description: string,
  ) {}

  /** False while the LISTEN connection is down (notifications may be missed). */
  get listening(): boolean {
    return this.listener.connected;
  }

  /** The pool, for tests and benchmarks that inspect the schema directly. */
  get pool(): PgContext['pool'] {
    return this.ctx.pool;
  }

  async migrationStatus(): Promise<MigrationStatus> {
    const client = await this.ctx.pool.connect();
    try {
      const { current, latest } = await migrationReport(client, this.schema, this.migrations);
      return { current, latest };
    } finally {
      client.release();
    }
  }

  async ping(): Promise<void> {
    await this.ctx.read.one('SELECT 1');
    this.ctx.health.assertWritable();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.ctx.hub.clear();
    await this.ctx.drain();
    await this.live.close();
    await this.listener.close();
    await this.ctx.pool.end();
  }

  subscribe(listener: ChangeListener, runId?: string): () => void {
    return this.ctx.hub.subscribe(listener, runId);
  }

  async importTenant(dump: TenantDump): Promise<number> {
    return importPostgresTenant(this.ctx, dump);
  }

  async stats(tenant?: string): Promise<StoreStats> {
    const params = tenant === undefined ? [] : [tenant];
    const and = tenant === undefined ? '' : 'AND tenant = $1';
    const count = async <K extends string>(table: string, keys: readonly K[]) => {
      const counts = Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>;
      const rows = await this.ctx.read.rows<{ status: K; n: number }>(
        `SELECT status, COUNT(*)::int AS n FROM ${table} WHERE true ${and} GROUP BY status`,
        params,
      );
      for (const row of rows) counts[row.status] = row.n;
      return counts;
    };
    const oldest = await this.ctx.read.one<{ t: string | null }>(
      `SELECT MIN(created_at)::text AS t FROM runs WHERE status = 'queued' ${and}`,
      params,
    );
    const failing = await this.ctx.read.one<{ n: number }>(
      `SELECT COUNT(*)::int AS n FROM schedules WHERE last_error IS NOT NULL ${and}`,
      params,
    );
    return {
      runs_by_status: await count<RunStatus>('runs', RUN_STATUSES),
      deliveries_by_status: await count<DeliveryStatus>('deliveries', DELIVERY_STATUSES),
      oldest_queued_ms: oldest?.t == null ? null : Number(oldest.t),
      schedules_failing: failing?.n ?? 0,
    };
  }

  createTenant(name: string, metadata: JsonObject) {
    return write(this.ctx, (tx) => tenants.createTenant(tx, name, metadata));
  }
  getTenant(name: string): Promise<Tenant | null> {
    return read(this.ctx, (db) => tenants.getTenant(db, name));
  }
  listTenants(): Promise<Tenant[]> {
    return read(this.ctx, (db) => tenants.listTenants(db));
  }
  updateTenant(name: string, metadata: JsonObject, ifUpdatedAt?: string): Promise<Tenant> {
    return write(this.ctx, (tx) => tenants.updateTenant(tx, name, metadata, ifUpdatedAt));
  }
  deleteTenant(name: string): Promise<boolean> {
    return write(this.ctx, (tx) => tenants.deleteTenant(tx, name));
  }
  createToken(token: TokenRecord & { hash: string }): Promise<TokenRecord> {
    return write(this.ctx, (tx) => tenants.createToken(tx, token));
  }
  listTokens(tenant: string): Promise<TokenRecord[]> {
    return read(this.ctx, (db) => tenants.listTokens(db, tenant));
  }
  deleteToken(tenant: string, id: string): Promise<boolean> {
    return write(this.ctx, (tx) => tenants.deleteToken(tx, tenant, id));
  }
  findToken(id: string): Promise<TokenLookup | null> {
    return read(this.ctx, (db) => tenants.findToken(db, id));
  }

  putAgent(tenant: string, name: string, spec: AgentSpec, maxAgents?: number) {
    return write(this.ctx, (tx) => agents.putAgent(tx, tenant, name, spec, maxAgents));
  }
  getAgent(tenant: string, name: string): Promise<Agent | null> {
    return read(this.ctx, (db) => agents.getAgent(db, tenant, name));
  }
  listAgents(tenant: string, limit: number, cursor?: string): Promise<Page<Agent>> {
    return read(this.ctx, (db) => agents.listAgents(db, tenant, limit, cursor));
  }
  deleteAgent(tenant: string, name: string): Promise<boolean> {
    return write(this.ctx, (tx) => agents.deleteAgent(tx, tenant, name));
  }

  enqueueRun(input: EnqueueRunInput): Promise<EnqueueResult> {
    return runs.enqueueRun(this.ctx, input);
  }
  getRun(tenant: string, runId: string): Promise<Run | null> {
    return read(this.ctx, (db) => sharedRuns.getRun(db, tenant, runId));
  }
  listRuns(tenant: string, filter: RunFilter, limit: number, cursor?: string): Promise<Page<Run>> {
    return read(this.ctx, (db) => sharedRuns.listRuns(db, tenant, filter, limit, cursor));
  }
  claimNextRun(options: ClaimOptions): Promise<ClaimedRun | null> {
    return runs.claimNextRun(this.ctx, options);
  }
  heartbeat(fence: Fence, leaseMs: number, elapsedMs?: number): Promise<boolean> {
    return write(this.ctx, (tx) => runWrites.heartbeat(tx, fence, leaseMs, elapsedMs));
  }
  async appendProgress(fence: Fence, progress: ProgressInput): Promise<RunEntry[]> {
    const stored = await write(this.ctx, (tx) => runWrites.appendProgress(tx, fence, progress));
    this.ctx.failpoints.hit('entry.after_commit');
    return stored;
  }
  loadEntries(runId: string): Promise<RunEntry[]> {
    return read(this.ctx, (db) => trace.loadEntries(db, runId));
  }
  async finalizeRun(fence: Fence, input: FinalizeInput): Promise<Run> {
    return writeAround(this.ctx, 'finalize', (tx) => runWrites.finalizeRun(tx, fence, input));
  }
  async takeSteers(
    fence: Fence,
    entryFor: (steer: PendingSteer) => EntryBody,
  ): Promise<RunEntry[]> {
    // The common case, nothing steered, costs one indexed read and no transaction.
    if (!(await read(this.ctx, (db) => steering.hasPendingSteers(db, fence.run_id)))) return [];
    return write(this.ctx, (tx) => steering.takeSteers(tx, fence, entryFor));
  }
  forkRun(input: ForkRunInput): Promise<Run> {
    return write(this.ctx, (tx) => steering.forkRun(tx, input));
  }
  async cancelRun(tenant: string, runId: string, reason: string | null): Promise<Run | null> {
    const { ctx } = this;
    const outcome = await write(
      ctx,
      (tx) => runWrites.cancelRun(tx, tenant, runId, reason),
      (ended) => ended?.cancelled && ctx.failpoints.hit('cancel.before_commit'),
    );
    return outcome?.run ?? null;
  }
  async requestApproval(fence: Fence, request: ApprovalRequest): Promise<Approval> {
    return writeAround(this.ctx, 'approval.request', (tx) =>
      approvals.requestApproval(tx, fence, request),
    );
  }
  async decideApproval(
    tenant: string,
    runId: string,
    callId: string,
    decision: ApprovalDecision,
  ): Promise<Approval> {
    return writeAround(this.ctx, 'approval.decide', (tx) =>
      approvals.decideApproval(tx, tenant, runId, callId, decision),
    );
  }
  listPendingApprovals(tenant: string, limit: number): Promise<PendingApproval[]> {
    return read(this.ctx, (db) => approvals.listPendingApprovals(db, tenant, limit));
  }
  listRunApprovals(tenant: string, runId: string): Promise<Approval[] | null> {
    return read(this.ctx, (db) => approvals.listRunApprovals(db, tenant, runId));
  }
  async expireApprovals(limit: number): Promise<number> {
    // The read-only probe first: an idle sweep (every second, on every worker) opens no
    // write transaction. The time is the store clock's, as in the transaction.
    const now = await this.ctx.now();
    if (!(await read(this.ctx, (db) => approvals.anyApprovalDue(db, now)))) return 0;
    return write(this.ctx, (tx) => approvals.expireApprovals(tx, limit));
  }
  pruneRunHistory(input: PruneInput): Promise<PruneResult> {
    return write(this.ctx, (tx) => retention.pruneRunHistory(tx, input));
  }
  getEntriesPage(
    tenant: string,
    runId: string,
    afterSeq: number,
    limit: number,
  ): Promise<EntryPage<RunEntry> | null> {
    return read(this.ctx, (db) => trace.getEntriesPage(db, tenant, runId, afterSeq, limit));
  }
  getTrace(
    tenant: string,
    runId: string,
    afterSeq: number,
    limit: number,
  ): Promise<TraceEvent[] | null> {
    return read(this.ctx, (db) => trace.getTrace(db, tenant, runId, afterSeq, limit));
  }

  listThreads(
    tenant: string,
    agent: string,
    limit: number,
    cursor?: string,
  ): Promise<Page<ThreadSummary>> {
    return read(this.ctx, (db) => threads.listThreads(db, tenant, agent, limit, cursor));
  }
  getThread(tenant: string, agent: string, scope: string): Promise<Thread | null> {
    return read(this.ctx, (db) => threads.getThread(db, tenant, agent, scope));
  }
  deleteThread(tenant: string, agent: string, scope: string): Promise<boolean> {
    return write(this.ctx, (tx) => threads.deleteThread(tx, tenant, agent, scope));
  }

  listDeliveries(
    tenant: string,
    filter: DeliveryFilter,
    limit: number,
    cursor?: string,
  ): Promise<Page<Delivery>> {
    return read(this.ctx, (db) => deliveries.listDeliveries(db, tenant, filter, limit, cursor));
  }
  async claimDeliveries(tenant: string, input: DeliveryClaimInput): Promise<ClaimedDelivery[]> {
    const claimed = await write(this.ctx, (tx) => deliveries.claimDeliveries(tx, tenant, input));
    if (claimed.length > 0) this.ctx.failpoints.hit('outbox.claim.after_commit');
    return claimed;
  }
  ackDelivery(tenant: string, deliveryId: string, input: DeliveryAckInput): Promise<Delivery> {
    return write(
      this.ctx,
      (tx) => deliveries.ackDelivery(tx, tenant, deliveryId, input),
      () => this.ctx.failpoints.hit('outbox.ack.before_commit'),
    );
  }
  retryDeadDelivery(tenant: string, deliveryId: string): Promise<Delivery> {
    return write(this.ctx, (tx) => deliveries.retryDeadDelivery(tx, tenant, deliveryId));
  }

  putArtifact(
    tenant: string,
    path: string,
    input: ArtifactWrite,
  ): Promise<{ artifact: ArtifactStat; created: boolean }> {
    const sha256 = artifacts.artifactDigest(input.body);
    return write(this.ctx, (tx) => artifacts.putArtifact(tx, tenant, path, input, sha256));
  }
  getArtifact(tenant: string, path: string): Promise<Artifact | null> {
    return read(this.ctx, (db) => artifacts.getArtifact(db, tenant, path));
  }
  listArtifacts(
    tenant: string,
    prefix: string,
    limit: number,
    cursor?: string,
  ): Promise<Page<ArtifactStat>> {
    return read(this.ctx, (db) => artifacts.listArtifacts(db, tenant, prefix, limit, cursor));
  }
  deleteArtifact(tenant: string, path: string): Promise<boolean> {
    return write(this.ctx, (tx) => artifacts.deleteArtifact(tx, tenant, path));
  }
  putSchedule(
    tenant: string,
    name: string,
    input: ScheduleWrite,
    owner?: ScheduleOwner,
  ): Promise<{ schedule: Schedule; created: boolean }> {
    return write(this.ctx, (tx) => sharedSchedules.putSchedule(tx, tenant, name, input, owner));
  }
  getSchedule(tenant: string, name: string): Promise<Schedule | null> {
    return read(this.ctx, (db) => sharedSchedules.getSchedule(db, tenant, name));
  }
  listSchedules(
    tenant: string,
    filter: ScheduleFilter,
    limit: number,
    cursor?: string,
  ): Promise<Page<Schedule>> {
    return read(this.ctx, (db) => sharedSchedules.listSchedules(db, tenant, filter, limit, cursor));
  }
  deleteSchedule(tenant: string, name: string, owner?: ScheduleOwner): Promise<boolean> {
    return write(this.ctx, (tx) => sharedSchedules.deleteSchedule(tx, tenant, name, owner));
  }
  recordSchedulerBeat(holder: string): Promise<void> {
    return write(this.ctx, (tx) => heartbeat.recordSchedulerBeat(tx, holder));
  }
  async schedulerStatus(): Promise<SchedulerStatus> {
    const now = await this.ctx.now();
    return read(this.ctx, (db) => heartbeat.schedulerStatus(db, now));
  }
  dueSchedules(limit: number): Promise<Schedule[]> {
    return schedules.dueSchedules(this.ctx, limit);
  }
  fireSchedule(input: ScheduleFireInput): Promise<ScheduleFireResult> {
    return schedules.fireSchedule(this.ctx, input);
  }

  putMemory(input: MemoryPutInput): Promise<{ fact: MemoryFact; created: boolean }> {
    return write(this.ctx, (tx) => sharedMemory.putMemory(tx, input, memory.writeVector));
  }
  getMemory(tenant: string, namespace: string, id: string): Promise<MemoryFact | null> {
    return read(this.ctx, (db) => sharedMemory.getMemory(db, tenant, namespace, id));
  }
  deleteMemory(tenant: string, namespace: string, id: string): Promise<boolean> {
    return write(this.ctx, (tx) => sharedMemory.deleteMemory(tx, tenant, namespace, id));
  }
  listMemory(
    tenant: string,
    namespace: string,
    limit: number,
    cursor?: string,
  ): Promise<Page<MemoryFact>> {
    return read(this.ctx, (db) => sharedMemory.listMemory(db, tenant, namespace, limit, cursor));
  }
  searchMemoryLexical(
    tenant: string,
    namespace: string,
    terms: MemoryLexicalTerms,
    pool: number,
  ): Promise<MemoryHit[]> {
    return memorySearch.searchLexical(this.ctx.read, tenant, namespace, terms, pool);
  }
  searchMemorySemantic(
    tenant: string,
    namespace: string,
    vector: MemoryVector,
    pool: number,
  ): Promise<MemoryHit[]> {
    return memorySearch.searchSemantic(
      this.ctx.read,
      tenant,
      namespace,
      vector,
      pool,
      this.features.pgvector,
    );
  }
  staleMemoryCounts(
    tenant: string,
    namespace: string,
    embedder: string,
  ): Promise<MemoryEmbedderCount[]> {
    return read(this.ctx, (db) => sharedMemory.staleMemoryCounts(db, tenant, namespace, embedder));
  }
  listStaleMemory(embedder: string, limit: number, afterKey: number): Promise<MemoryStaleFact[]> {
    return read(this.ctx, (db) => sharedMemory.listStaleMemory(db, embedder, limit, afterKey));
  }
  countStaleMemory(embedder: string): Promise<number> {
    return read(this.ctx, (db) => sharedMemory.countStaleMemory(db, embedder));
  }
  setMemoryVectors(updates: MemoryVectorUpdate[]): Promise<number> {
    return write(this.ctx, (tx) => sharedMemory.setMemoryVectors(tx, updates, memory.writeVector));
  }

  // --- WebAssembly tools (docs/wasm-tools.md) ---
  putWasmTool(
    tenant: string,
    name: string,
    record: { manifest: JsonObject; module: Uint8Array },
    maxTools?: number,
  ): Promise<{ tool: WasmToolInfo; created: boolean }> {
    const sha256 = moduleDigest(record.module);
    return write(this.ctx, (tx) =>
      wasmTools.putWasmTool(tx, tenant, name, record, sha256, maxTools),
    );
  }
  getWasmTool(tenant: string, name: string): Promise<WasmToolRecord | null> {
    return read(this.ctx, (db) => wasmTools.getWasmTool(db, tenant, name));
  }
  listWasmTools(tenant: string): Promise<WasmToolInfo[]> {
    return read(this.ctx, (db) => wasmTools.listWasmTools(db, tenant));
  }
  listWasmToolsPage(tenant: string, limit: number, cursor?: string): Promise<Page<WasmToolInfo>> {
    return read(this.ctx, (db) => wasmTools.listWasmToolsPage(db, tenant, limit, cursor));
  }
  deleteWasmTool(tenant: string, name: string): Promise<boolean> {
    return write(this.ctx, (tx) => wasmTools.deleteWasmTool(tx, tenant, name));
  }
  // --- MCP servers and tenant secrets (docs/mcp.md) ---
  putMcpServer(
    tenant: string,
    name: string,
    record: { spec: JsonObject; tools: JsonObject[]; last_error: string | null },
    maxServers?: number,
  ): Promise<{ server: McpServerRecord; created: boolean }> {
    return write(this.ctx, (tx) => mcp.putMcpServer(tx, tenant, name, record, maxServers));
  }
  getMcpServer(tenant: string, name: string): Promise<McpServerRecord | null> {
    return read(this.ctx, (db) => mcp.getMcpServer(db, tenant, name));
  }
  listMcpServers(tenant: string): Promise<McpServerRecord[]> {
    return read(this.ctx, (db) => mcp.listMcpServers(db, tenant));
  }
  listMcpServersPage(
    tenant: string,
    limit: number,
    cursor?: string,
  ): Promise<Page<McpServerRecord>> {
    return read(this.ctx, (db) => mcp.listMcpServersPage(db, tenant, limit, cursor));
  }
  listAllMcpServers(): Promise<McpServerRecord[]> {
    return read(this.ctx, (db) => mcp.listMcpServers(db, null));
  }
  updateMcpServerDiscovery(
    tenant: string,
    name: string,
    discovery: { tools?: JsonObject[]; last_error: string | null },
  ): Promise<boolean> {
    return write(this.ctx, (tx) => mcp.updateMcpServerDiscovery(tx, tenant, name, discovery));
  }
  deleteMcpServer(tenant: string, name: string): Promise<boolean> {
    return write(this.ctx, (tx) => mcp.deleteMcpServer(tx, tenant, name));
  }
  putSecret(
    tenant: string,
    name: string,
    value: string,
    maxSecrets?: number,
  ): Promise<{ created: boolean }> {
    return write(this.ctx, (tx) => mcp.putSecret(tx, tenant, name, value, maxSecrets));
  }
  listSecrets(tenant: string, limit: number, cursor?: string): Promise<Page<SecretInfo>> {
    return read(this.ctx, (db) => mcp.listSecrets(db, tenant, limit, cursor));
  }
  getSecretValue(tenant: string, name: string): Promise<string | null> {
    return read(this.ctx, (db) => mcp.getSecretValue(db, tenant, name));
  }
  deleteSecret(tenant: string, name: string): Promise<boolean> {
    return write(this.ctx, (tx) => mcp.deleteSecret(tx, tenant, name));
  }

  // --- signed webhooks (docs/channels.md) ---
  putWebhook(
    tenant: string,
    name: string,
    url: string,
    secret: string,
    maxWebhooks?: number,
  ): Promise<{ webhook: WebhookInfo; created: boolean }> {
    return write(this.ctx, (tx) => webhooks.putWebhook(tx, tenant, name, url, secret, maxWebhooks));
  }
  getWebhook(tenant: string, name: string): Promise<WebhookRecord | null> {
    return read(this.ctx, (db) => webhooks.getWebhook(db, tenant, name));
  }
  listWebhooks(tenant: string, limit: number, cursor?: string): Promise<Page<WebhookInfo>> {
    return read(this.ctx, (db) => webhooks.listWebhooks(db, tenant, limit, cursor));
  }
  rotateWebhookSecret(tenant: string, name: string, secret: string): Promise<WebhookInfo | null> {
    return write(this.ctx, (tx) => webhooks.rotateWebhookSecret(tx, tenant, name, secret));
  }
  deleteWebhook(tenant: string, name: string): Promise<boolean> {
    return write(this.ctx, (tx) => webhooks.deleteWebhook(tx, tenant, name));
  }

  // --- model usage and budgets (src/store/rules/usage.ts) ---
  getUsage(
    tenant: string,
    query: usageRules.UsageQuery,
  ): Promise<{ rows: usageRules.UsageRow[]; total: usageRules.UsageTotals }> {
    return read(this.ctx, (db) => usage.getUsage(db, tenant, query));
  }
  async getBudgetState(tenant: string, runId: string): Promise<usageRules.BudgetState> {
    const now = await this.ctx.now();
    return read(this.ctx, (db) => usage.getBudgetState(db, tenant, runId, now));
  }
  getTenantBudget(tenant: string): Promise<usageRules.TenantBudget> {
    return read(this.ctx, (db) => usage.getTenantBudget(db, tenant));
  }
  putTenantBudget(
    tenant: string,
    budget: usageRules.TenantBudget,
  ): Promise<usageRules.TenantBudget> {
    return write(this.ctx, (tx) => usage.putTenantBudget(tx, tenant, budget));
  }
}
