// The Store interface on one better-sqlite3 connection. Every method is a thin async
// wrapper over a synchronous repository function: a write is one BEGIN IMMEDIATE
// transaction that finishes before the method's promise settles.

import type { TenantDump } from '../rules/tenant-export.ts';
import { importSqliteTenant } from './tenant-export.ts';
import type { Database as SqliteDatabase } from 'better-sqlite3';
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
import type { StoreContext } from './context.ts';
import * as deliveries from '../repositories/deliveries.ts';
import * as mcp from '../repositories/mcp.ts';
import * as wasmTools from '../repositories/wasm-tools.ts';
import { moduleDigest } from '../rules/wasm-tools.ts';
import * as webhooks from '../repositories/webhooks.ts';
import { read, write, writeAround } from './steps.ts';
import * as memory from './memory.ts';
import * as sharedMemory from '../repositories/memory.ts';
import * as memorySearch from './memory-search.ts';
import type { WebhookInfo, WebhookRecord } from '../rules/webhooks.ts';
import type { EntryPage } from '../rules/keyset.ts';
import type { MemoryFact } from '../../types.ts';
import type {
  MemoryEmbedderCount,
  MemoryHit,
  MemoryLexicalTerms,
  MemoryPutInput,
  MemoryStaleFact,
  MemoryVector,
  MemoryVectorUpdate,
} from '../store.ts';
import type { DataDirLock } from './lock.ts';
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

function countBy<K extends string>(
  db: SqliteDatabase,
  table: 'runs' | 'deliveries',
  keys: readonly K[],
  tenant: string | undefined,
): Record<K, number> {
  const counts = Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>;
  const where = tenant === undefined ? '' : 'WHERE tenant = ?';
  const rows = db
    .prepare(`SELECT status, COUNT(*) AS n FROM ${table} ${where} GROUP BY status`)
    .all(...(tenant === undefined ? [] : [tenant])) as { status: K; n: number }[];
  for (const row of rows) counts[row.status] = row.n;
  return counts;
}

/** The oldest queued run's creation time and the schedules whose last fire failed. */
function backlog(
  db: SqliteDatabase,
  tenant: string | undefined,
): Pick<StoreStats, 'oldest_queued_ms' | 'schedules_failing'> {
  const and = tenant === undefined ? '' : 'AND tenant = ?';
  const params = tenant === undefined ? [] : [tenant];
  const oldest = db
    .prepare(`SELECT MIN(created_at) AS t FROM runs WHERE status = 'queued' ${and}`)
    .get(...params) as { t: number | null };
  const failing = db
    .prepare(`SELECT COUNT(*) AS n FROM schedules WHERE last_error IS NOT NULL ${and}`)
    .get(...params) as { n: number };
  return { oldest_queued_ms: oldest.t, schedules_failing: failing.n };
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  private closed = false;

  constructor(
    private readonly ctx: StoreContext,
    private readonly lock: DataDirLock | null,
    private readonly migrations: readonly Migration[],
    readonly path: string,
    readonly description: string,
  ) {}

  async migrationStatus(): Promise<MigrationStatus> {
    const { current, latest } = migrationReport(this.ctx.db, this.migrations, this.path);
    return { current, latest };
  }

  /** The connection settings as SQLite reports them (for diagnostics and tests). */
  settings(): {
    journal_mode: string;
    synchronous: number;
    foreign_keys: number;
    busy_timeout: number;
    page_size: number;
    wal_autocheckpoint: number;
    cache_size: number;
  } {
    const read = (name: string): unknown => this.ctx.db.pragma(name, { simple: true });
    return {
      journal_mode: String(read('journal_mode')),
      synchronous: Number(read('synchronous')),
      foreign_keys: Number(read('foreign_keys')),
      busy_timeout: Number(read('busy_timeout')),
      page_size: Number(read('page_size')),
      wal_autocheckpoint: Number(read('wal_autocheckpoint')),
      cache_size: Number(read('cache_size')),
    };
  }

  async ping(): Promise<void> {
    this.ctx.db.prepare('SELECT 1').get();
    // Not ready while the disk is full (space freed outside keel is noticed here).
    this.ctx.disk.recover('probe');
    this.ctx.disk.health.assertWritable();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.ctx.disk.stop();
    // Writes already queued for the next group commit are committed, not dropped.
    this.ctx.flush();
    this.ctx.reads.close();
    this.ctx.hub.clear();
    await this.ctx.readPool?.close();
    this.ctx.db.close();
    this.lock?.release();
  }

  subscribe(listener: ChangeListener, runId?: string): () => void {
    return this.ctx.hub.subscribe(listener, runId);
  }

  async importTenant(dump: TenantDump): Promise<number> {
    return importSqliteTenant(this.ctx, dump);
  }

  async stats(tenant?: string): Promise<StoreStats> {
    const { db } = this.ctx;
    return {
      runs_by_status: countBy<RunStatus>(db, 'runs', RUN_STATUSES, tenant),
      deliveries_by_status: countBy<DeliveryStatus>(db, 'deliveries', DELIVERY_STATUSES, tenant),
      ...backlog(db, tenant),
    };
  }

  async createTenant(name: string, metadata: JsonObject) {
    return write(this.ctx, (tx) => tenants.createTenant(tx, name, metadata));
  }
  async getTenant(name: string): Promise<Tenant | null> {
    return read(this.ctx, (db) => tenants.getTenant(db, name));
  }
  async listTenants(): Promise<Tenant[]> {
    return read(this.ctx, (db) => tenants.listTenants(db));
  }
  async updateTenant(name: string, metadata: JsonObject, ifUpdatedAt?: string): Promise<Tenant> {
    return write(this.ctx, (tx) => tenants.updateTenant(tx, name, metadata, ifUpdatedAt));
  }
  async deleteTenant(name: string): Promise<boolean> {
    // Deletes go on while the disk is full: they are how space comes back.
    return this.ctx.disk.freeingSpace(() =>
      write(this.ctx, (tx) => tenants.deleteTenant(tx, name)),
    );
  }
  async createToken(token: TokenRecord & { hash: string }): Promise<TokenRecord> {
    return write(this.ctx, (tx) => tenants.createToken(tx, token));
  }
  async listTokens(tenant: string): Promise<TokenRecord[]> {
    return read(this.ctx, (db) => tenants.listTokens(db, tenant));
  }
  async deleteToken(tenant: string, id: string): Promise<boolean> {
    return this.ctx.disk.freeingSpace(() =>
      write(this.ctx, (tx) => tenants.deleteToken(tx, tenant, id)),
    );
  }
  async findToken(id: string): Promise<TokenLookup | null> {
    return read(this.ctx, (db) => tenants.findToken(db, id));
  }

  async putAgent(tenant: string, name: string, spec: AgentSpec, maxAgents?: number) {
    return write(this.ctx, (tx) => agents.putAgent(tx, tenant, name, spec, maxAgents));
  }
  async getAgent(tenant: string, name: string): Promise<Agent | null> {
    return read(this.ctx, (db) => agents.getAgent(db, tenant, name));
  }
  async listAgents(tenant: string, limit: number, cursor?: string): Promise<Page<Agent>> {
    return read(this.ctx, (db) => agents.listAgents(db, tenant, limit, cursor));
  }
  async deleteAgent(tenant: string, name: string): Promise<boolean> {
    return this.ctx.disk.freeingSpace(() =>
      write(this.ctx, (tx) => agents.deleteAgent(tx, tenant, name)),
    );
  }

  async enqueueRun(input: EnqueueRunInput): Promise<EnqueueResult> {
    return this.ctx.batched(() => runs.enqueueRun(this.ctx, input));
  }
  async getRun(tenant: string, runId: string): Promise<Run | null> {
    return read(this.ctx, (db) => sharedRuns.getRun(db, tenant, runId));
  }
  async listRuns(
    tenant: string,
    filter: RunFilter,
    limit: number,
    cursor?: string,
  ): Promise<Page<Run>> {
    return read(this.ctx, (db) => sharedRuns.listRuns(db, tenant, filter, limit, cursor));
  }
  async claimNextRun(options: ClaimOptions): Promise<ClaimedRun | null> {
    return this.ctx.batched(() => runs.claimNextRun(this.ctx, options));
  }
  async heartbeat(fence: Fence, leaseMs: number, elapsedMs?: number): Promise<boolean> {
    return this.ctx.batched(() =>
      write(this.ctx, (tx) => runWrites.heartbeat(tx, fence, leaseMs, elapsedMs)),
    );
  }
  /**
   * SQLite only, not part of Store: the process that owns the data dir expires every
   * lease at start-up, since they all belong to a process that is gone (main.ts). A
   * shared PostgreSQL database has live leases of other processes: no such operation.
   */
  async expireAllLeases(): Promise<number> {
    return write(this.ctx, (tx) => runWrites.expireAllLeases(tx));
  }
  async appendProgress(fence: Fence, progress: ProgressInput): Promise<RunEntry[]> {
    const { ctx } = this;
    return ctx.batched(() => {
      const stored = write(ctx, (tx) => runWrites.appendProgress(tx, fence, progress));
      ctx.afterCommit(() => ctx.failpoints.hit('entry.after_commit'));
      return stored;
    });
  }
  async loadEntries(runId: string): Promise<RunEntry[]> {
    return read(this.ctx, (db) => trace.loadEntries(db, runId));
  }
  async finalizeRun(fence: Fence, input: FinalizeInput): Promise<Run> {
    const { ctx } = this;
    return ctx.batched(() =>
      writeAround(ctx, 'finalize', (tx) => runWrites.finalizeRun(tx, fence, input)),
    );
  }
  async cancelRun(tenant: string, runId: string, reason: string | null): Promise<Run | null> {
    const { ctx } = this;
    return ctx.batched(() => {
      const outcome = write(
        ctx,
        (tx) => runWrites.cancelRun(tx, tenant, runId, reason),
        (ended) => ended?.cancelled && ctx.failpoints.hit('cancel.before_commit'),
      );
      return outcome?.run ?? null;
    });
  }
  async takeSteers(
    fence: Fence,
    entryFor: (steer: PendingSteer) => EntryBody,
  ): Promise<RunEntry[]> {
    // The common case, nothing steered, costs one indexed read and no write.
    if (!read(this.ctx, (db) => steering.hasPendingSteers(db, fence.run_id))) return [];
    return this.ctx.batched(() =>
      write(this.ctx, (tx) => steering.takeSteers(tx, fence, entryFor)),
    );
  }
  async forkRun(input: ForkRunInput): Promise<Run> {
    return this.ctx.batched(() => write(this.ctx, (tx) => steering.forkRun(tx, input)));
  }
  async requestApproval(fence: Fence, request: ApprovalRequest): Promise<Approval> {
    const { ctx } = this;
    return ctx.batched(() =>
      writeAround(ctx, 'approval.request', (tx) => approvals.requestApproval(tx, fence, request)),
    );
  }
  async decideApproval(
    tenant: string,
    runId: string,
    callId: string,
    decision: ApprovalDecision,
  ): Promise<Approval> {
    const { ctx } = this;
    return ctx.batched(() =>
      writeAround(ctx, 'approval.decide', (tx) =>
        approvals.decideApproval(tx, tenant, runId, callId, decision),
      ),
    );
  }
  async listPendingApprovals(tenant: string, limit: number): Promise<PendingApproval[]> {
    return read(this.ctx, (db) => approvals.listPendingApprovals(db, tenant, limit));
  }
  async listRunApprovals(tenant: string, runId: string): Promise<Approval[] | null> {
    return read(this.ctx, (db) => approvals.listRunApprovals(db, tenant, runId));
  }
  async expireApprovals(limit: number): Promise<number> {
    const { ctx } = this;
    // The read-only probe first: an idle sweep (every second) takes no write lock.
    return ctx.batched(() =>
      read(ctx, (db) => approvals.anyApprovalDue(db, ctx.now()))
        ? write(ctx, (tx) => approvals.expireApprovals(tx, limit))
        : 0,
    );
  }
  async pruneRunHistory(input: PruneInput): Promise<PruneResult> {
    return write(this.ctx, (tx) => retention.pruneRunHistory(tx, input));
  }
  async getEntriesPage(
    tenant: string,
    runId: string,
    afterSeq: number,
    limit: number,
  ): Promise<EntryPage<RunEntry> | null> {
    return read(this.ctx, (db) => trace.getEntriesPage(db, tenant, runId, afterSeq, limit));
  }
  async getTrace(
    tenant: string,
    runId: string,
    afterSeq: number,
    limit: number,
  ): Promise<TraceEvent[] | null> {
    return read(this.ctx, (db) => trace.getTrace(db, tenant, runId, afterSeq, limit));
  }

  async listThreads(
    tenant: string,
    agent: string,
    limit: number,
    cursor?: string,
  ): Promise<Page<ThreadSummary>> {
    return read(this.ctx, (db) => threads.listThreads(db, tenant, agent, limit, cursor));
  }
  async getThread(tenant: string, agent: string, scope: string): Promise<Thread | null> {
    return read(this.ctx, (db) => threads.getThread(db, tenant, agent, scope));
  }
  async deleteThread(tenant: string, agent: string, scope: string): Promise<boolean> {
    return this.ctx.disk.freeingSpace(() =>
      write(this.ctx, (tx) => threads.deleteThread(tx, tenant, agent, scope)),
    );
  }

  async listDeliveries(
    tenant: string,
    filter: DeliveryFilter,
    limit: number,
    cursor?: string,
  ): Promise<Page<Delivery>> {
    return read(this.ctx, (db) => deliveries.listDeliveries(db, tenant, filter, limit, cursor));
  }
  async claimDeliveries(tenant: string, input: DeliveryClaimInput): Promise<ClaimedDelivery[]> {
    const { ctx } = this;
    return ctx.batched(() => {
      const claimed = write(ctx, (tx) => deliveries.claimDeliveries(tx, tenant, input));
      if (claimed.length > 0)
        ctx.afterCommit(() => ctx.failpoints.hit('outbox.claim.after_commit'));
      return claimed;
    });
  }
  async ackDelivery(
    tenant: string,
    deliveryId: string,
    input: DeliveryAckInput,
  ): Promise<Delivery> {
    const { ctx } = this;
    return ctx.batched(() =>
      write(
        ctx,
        (tx) => deliveries.ackDelivery(tx, tenant, deliveryId, input),
        () => ctx.failpoints.hit('outbox.ack.before_commit'),
      ),
    );
  }
  async retryDeadDelivery(tenant: string, deliveryId: string): Promise<Delivery> {
    return this.ctx.batched(() =>
      write(this.ctx, (tx) => deliveries.retryDeadDelivery(tx, tenant, deliveryId)),
    );
  }

  // --- artifacts and schedules (built-in capabilities) ---
  async putArtifact(
    tenant: string,
    path: string,
    input: ArtifactWrite,
  ): Promise<{ artifact: ArtifactStat; created: boolean }> {
    const sha256 = artifacts.artifactDigest(input.body);
    return write(this.ctx, (tx) => artifacts.putArtifact(tx, tenant, path, input, sha256));
  }
  async getArtifact(tenant: string, path: string): Promise<Artifact | null> {
    return read(this.ctx, (db) => artifacts.getArtifact(db, tenant, path));
  }
  async listArtifacts(
    tenant: string,
    prefix: string,
    limit: number,
    cursor?: string,
  ): Promise<Page<ArtifactStat>> {
    return read(this.ctx, (db) => artifacts.listArtifacts(db, tenant, prefix, limit, cursor));
  }
  async deleteArtifact(tenant: string, path: string): Promise<boolean> {
    return this.ctx.disk.freeingSpace(() =>
      write(this.ctx, (tx) => artifacts.deleteArtifact(tx, tenant, path)),
    );
  }
  async putSchedule(
    tenant: string,
    name: string,
    input: ScheduleWrite,
    owner?: ScheduleOwner,
  ): Promise<{ schedule: Schedule; created: boolean }> {
    return write(this.ctx, (tx) => sharedSchedules.putSchedule(tx, tenant, name, input, owner));
  }
  async getSchedule(tenant: string, name: string): Promise<Schedule | null> {
    return read(this.ctx, (db) => sharedSchedules.getSchedule(db, tenant, name));
  }
  async listSchedules(
    tenant: string,
    filter: ScheduleFilter,
    limit: number,
    cursor?: string,
  ): Promise<Page<Schedule>> {
    return read(this.ctx, (db) => sharedSchedules.listSchedules(db, tenant, filter, limit, cursor));
  }
  async deleteSchedule(tenant: string, name: string, owner?: ScheduleOwner): Promise<boolean> {
    return this.ctx.disk.freeingSpace(() =>
      write(this.ctx, (tx) => sharedSchedules.deleteSchedule(tx, tenant, name, owner)),
    );
  }
  async recordSchedulerBeat(holder: string): Promise<void> {
    write(this.ctx, (tx) => heartbeat.recordSchedulerBeat(tx, holder));
  }
  async schedulerStatus(): Promise<SchedulerStatus> {
    const now = this.ctx.now();
    return read(this.ctx, (db) => heartbeat.schedulerStatus(db, now));
  }
  async dueSchedules(limit: number): Promise<Schedule[]> {
    return schedules.dueSchedules(this.ctx, limit);
  }
  async fireSchedule(input: ScheduleFireInput): Promise<ScheduleFireResult> {
    return schedules.fireSchedule(this.ctx, input);
  }

  // memory (src/store/sqlite/memory*.ts)
  async putMemory(input: MemoryPutInput): Promise<{ fact: MemoryFact; created: boolean }> {
    return write(this.ctx, (tx) =>
      sharedMemory.putMemory(tx, input, memory.vectorWriter(this.ctx)),
    );
  }
  async getMemory(tenant: string, namespace: string, id: string): Promise<MemoryFact | null> {
    return read(this.ctx, (db) => sharedMemory.getMemory(db, tenant, namespace, id));
  }
  async deleteMemory(tenant: string, namespace: string, id: string): Promise<boolean> {
    return this.ctx.disk.freeingSpace(() =>
      write(this.ctx, (tx) => sharedMemory.deleteMemory(tx, tenant, namespace, id)),
    );
  }
  async listMemory(
    tenant: string,
    namespace: string,
    limit: number,
    cursor?: string,
  ): Promise<Page<MemoryFact>> {
    return read(this.ctx, (db) => sharedMemory.listMemory(db, tenant, namespace, limit, cursor));
  }
  async searchMemoryLexical(
    tenant: string,
    namespace: string,
    terms: MemoryLexicalTerms,
    pool: number,
  ): Promise<MemoryHit[]> {
    return memorySearch.searchLexical(this.ctx, tenant, namespace, terms, pool);
  }
  async searchMemorySemantic(
    tenant: string,
    namespace: string,
    vector: MemoryVector,
    pool: number,
  ): Promise<MemoryHit[]> {
    return memorySearch.searchSemantic(this.ctx, tenant, namespace, vector, pool);
  }
  async staleMemoryCounts(
    tenant: string,
    namespace: string,
    embedder: string,
  ): Promise<MemoryEmbedderCount[]> {
    return read(this.ctx, (db) => sharedMemory.staleMemoryCounts(db, tenant, namespace, embedder));
  }
  async listStaleMemory(
    embedder: string,
    limit: number,
    afterKey: number,
  ): Promise<MemoryStaleFact[]> {
    return read(this.ctx, (db) => sharedMemory.listStaleMemory(db, embedder, limit, afterKey));
  }
  async countStaleMemory(embedder: string): Promise<number> {
    return read(this.ctx, (db) => sharedMemory.countStaleMemory(db, embedder));
  }
  async setMemoryVectors(updates: MemoryVectorUpdate[]): Promise<number> {
    return write(this.ctx, (tx) =>
      sharedMemory.setMemoryVectors(tx, updates, memory.vectorWriter(this.ctx)),
    );
  }

  // --- WebAssembly tools (docs/wasm-tools.md) ---
  async putWasmTool(
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
  async getWasmTool(tenant: string, name: string): Promise<WasmToolRecord | null> {
    return read(this.ctx, (db) => wasmTools.getWasmTool(db, tenant, name));
  }
  async listWasmTools(tenant: string): Promise<WasmToolInfo[]> {
    return read(this.ctx, (db) => wasmTools.listWasmTools(db, tenant));
  }
  async listWasmToolsPage(
    tenant: string,
    limit: number,
    cursor?: string,
  ): Promise<Page<WasmToolInfo>> {
    return read(this.ctx, (db) => wasmTools.listWasmToolsPage(db, tenant, limit, cursor));
  }
  async deleteWasmTool(tenant: string, name: string): Promise<boolean> {
    return this.ctx.disk.freeingSpace(() =>
      write(this.ctx, (tx) => wasmTools.deleteWasmTool(tx, tenant, name)),
    );
  }
  // --- MCP servers and tenant secrets (docs/mcp.md) ---
  async putMcpServer(
    tenant: string,
    name: string,
    record: { spec: JsonObject; tools: JsonObject[]; last_error: string | null },
    maxServers?: number,
  ): Promise<{ server: McpServerRecord; created: boolean }> {
    return write(this.ctx, (tx) => mcp.putMcpServer(tx, tenant, name, record, maxServers));
  }
  async getMcpServer(tenant: string, name: string): Promise<McpServerRecord | null> {
    return read(this.ctx, (db) => mcp.getMcpServer(db, tenant, name));
  }
  async listMcpServers(tenant: string): Promise<McpServerRecord[]> {
    return read(this.ctx, (db) => mcp.listMcpServers(db, tenant));
  }
  async listMcpServersPage(
    tenant: string,
    limit: number,
    cursor?: string,
  ): Promise<Page<McpServerRecord>> {
    return read(this.ctx, (db) => mcp.listMcpServersPage(db, tenant, limit, cursor));
  }
  async listAllMcpServers(): Promise<McpServerRecord[]> {
    return read(this.ctx, (db) => mcp.listMcpServers(db, null));
  }
  async updateMcpServerDiscovery(
    tenant: string,
    name: string,
    discovery: { tools?: JsonObject[]; last_error: string | null },
  ): Promise<boolean> {
    return write(this.ctx, (tx) => mcp.updateMcpServerDiscovery(tx, tenant, name, discovery));
  }
  async deleteMcpServer(tenant: string, name: string): Promise<boolean> {
    return this.ctx.disk.freeingSpace(() =>
      write(this.ctx, (tx) => mcp.deleteMcpServer(tx, tenant, name)),
    );
  }
  async putSecret(
    tenant: string,
    name: string,
    value: string,
    maxSecrets?: number,
  ): Promise<{ created: boolean }> {
    return write(this.ctx, (tx) => mcp.putSecret(tx, tenant, name, value, maxSecrets));
  }
  async listSecrets(tenant: string, limit: number, cursor?: string): Promise<Page<SecretInfo>> {
    return read(this.ctx, (db) => mcp.listSecrets(db, tenant, limit, cursor));
  }
  async getSecretValue(tenant: string, name: string): Promise<string | null> {
    return read(this.ctx, (db) => mcp.getSecretValue(db, tenant, name));
  }
  async deleteSecret(tenant: string, name: string): Promise<boolean> {
    return this.ctx.disk.freeingSpace(() =>
      write(this.ctx, (tx) => mcp.deleteSecret(tx, tenant, name)),
    );
  }

  // --- signed webhooks (docs/channels.md) ---
  async putWebhook(
    tenant: string,
    name: string,
    url: string,
    secret: string,
    maxWebhooks?: number,
  ): Promise<{ webhook: WebhookInfo; created: boolean }> {
    return write(this.ctx, (tx) => webhooks.putWebhook(tx, tenant, name, url, secret, maxWebhooks));
  }
  async getWebhook(tenant: string, name: string): Promise<WebhookRecord | null> {
    return read(this.ctx, (db) => webhooks.getWebhook(db, tenant, name));
  }
  async listWebhooks(tenant: string, limit: number, cursor?: string): Promise<Page<WebhookInfo>> {
    return read(this.ctx, (db) => webhooks.listWebhooks(db, tenant, limit, cursor));
  }
  async rotateWebhookSecret(
    tenant: string,
    name: string,
    secret: string,
  ): Promise<WebhookInfo | null> {
    return write(this.ctx, (tx) => webhooks.rotateWebhookSecret(tx, tenant, name, secret));
  }
  async deleteWebhook(tenant: string, name: string): Promise<boolean> {
    return write(this.ctx, (tx) => webhooks.deleteWebhook(tx, tenant, name));
  }

  // --- model usage and budgets (src/store/rules/usage.ts) ---
  async getUsage(
    tenant: string,
    query: usageRules.UsageQuery,
  ): Promise<{ rows: usageRules.UsageRow[]; total: usageRules.UsageTotals }> {
    return read(this.ctx, (db) => usage.getUsage(db, tenant, query));
  }
  async getBudgetState(tenant: string, runId: string): Promise<usageRules.BudgetState> {
    return read(this.ctx, (db) => usage.getBudgetState(db, tenant, runId, this.ctx.now()));
  }
  async getTenantBudget(tenant: string): Promise<usageRules.TenantBudget> {
    return read(this.ctx, (db) => usage.getTenantBudget(db, tenant));
  }
  async putTenantBudget(
    tenant: string,
    budget: usageRules.TenantBudget,
  ): Promise<usageRules.TenantBudget> {
    return write(this.ctx, (tx) => usage.putTenantBudget(tx, tenant, budget));
  }
}
