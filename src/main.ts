// The composition root: config → logger, metrics, failpoints → store → API + workers.
// The only module (with the CLI) that imports concrete backends and providers.

import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import { assertListenAllowed, buildApi } from './api/app.ts';
import { buildRoleHealthServer } from './api/role-health.ts';
import type { KeelConfig } from './config.ts';
import { describeEarlierPaths, describeFiles } from './config-locations.ts';
import { KeelError } from './errors.ts';
import type { Failpoints } from './failpoints.ts';
import { inertFailpoints } from './failpoints.ts';
import type { Logger } from './logger.ts';
import { createLogger } from './logger.ts';
import type { Metrics } from './metrics.ts';
import type { Embedder } from './memory/embedders/embedder.ts';
import {
  createEmbedder,
  embedderProvider,
  prepareInBackground,
} from './memory/embedders/create.ts';
import { MaintenanceScans } from './memory/maintenance.ts';
import { createMemoryService } from './memory/service.ts';
import { createMetrics } from './metrics.ts';
import type { Provider } from './providers/provider.ts';
import { createConfiguredProviders } from './providers/configured.ts';
import { assertProviderKeys } from './providers/provider-keys.ts';
import { createProviderRegistry } from './providers/registry.ts';
import type { RunJournalPort } from './runtime/journal.ts';
import type { LiveEvents, LiveRelay } from './runtime/live.ts';
import { createLiveEvents } from './runtime/live.ts';
import { createToolPorts } from './runtime/tool-ports.ts';
import type { Worker } from './runtime/worker.ts';
import { createScheduler } from './schedules/scheduler.ts';
import { createSchedulerWatch } from './schedules/scheduler-watch.ts';
import { createWebhookWorker } from './channels/webhooks/worker.ts';
import { createWorker } from './runtime/worker.ts';
import { priceBook } from './runtime/usage-prices.ts';
import { createRunRetention, retentionAges } from './runtime/retention.ts';
import { openSqliteStore } from './store/sqlite/index.ts';
import type { Store } from './store/store.ts';
import { builtinTools } from './tools/builtin/index.ts';
import type { ToolRegistry } from './tools/registry.ts';
import type { AnyToolSpec } from './tools/tool.ts';
import { createToolRegistry } from './tools/registry.ts';
import { createWebClient } from './web/client.ts';
import { createToolCatalog } from './mcp/catalog.ts';
import { createSchemaCompiler } from './mcp/discovery.ts';
import { createMcpService } from './mcp/service.ts';
import { createMcpSessions } from './mcp/sessions.ts';
import { withWasmTools } from './wasm/catalog.ts';
import { createCompiledModules } from './wasm/modules.ts';
import type { WasmPool } from './wasm/pool.ts';
import { createWasmPool } from './wasm/pool.ts';
import { createWasmService } from './wasm/service.ts';
import { loadRunTracer } from './telemetry/load.ts';

export interface KeelOptions {
  /** Replaces the configured memory embedder (tests use `hash` to skip the GloVe cache). */
  embedder?: Embedder;
  /** Extra or replacement providers by name (tests); `fixture` is always present. */
  providers?: Record<string, Provider>;
  logger?: Logger;
  /** How long in-flight tool calls may finish on stop(); model calls stop at once. */
  shutdownGraceMs?: number;
  /**
   * What this process does (keel serve --role): api = HTTP API only; worker = claim
   * loop; scheduler = scheduler; all (default) = everything. worker and scheduler serve
   * only /healthz and /metrics. Anything but all needs PostgreSQL.
   */
  role?: KeelRole;
  /** Test-only fault points (the config never enables any); default inert. */
  failpoints?: Failpoints;
  /**
   * Wraps the opened store before anything uses it; `url` is config.store.url. Only a
   * test passes one (test/helpers/seeded-bugs.ts breaks a guarantee on purpose); no
   * command, config key or environment variable reaches it.
   */
  wrapStore?: (store: Store, url: string) => Store;
  /** Wraps the journal the runs record to (default: the store); only a test passes one. */
  wrapJournal?: (journal: RunJournalPort) => RunJournalPort;
  /** Test-only tools (the effect sink's); the config never adds any. */
  extraTools?: readonly AnyToolSpec[];
  /**
   * Prepare the memory embedder in the background right after start (glove-sif builds
   * its word-vector cache on a data dir's first start, ~20 s). Default: on first use,
   * when HTTP memory calls answer 503 EMBEDDER_UNAVAILABLE + Retry-After meanwhile.
   */
  prepareEmbedder?: boolean;
}

export const KEEL_ROLES = ['api', 'worker', 'scheduler', 'all'] as const;
export type KeelRole = (typeof KEEL_ROLES)[number];

export interface Keel {
  /** `http://HOST:PORT` as actually bound (port 0 resolved). */
  url: string;
  config: KeelConfig;
  store: Store;
  logger: Logger;
  metrics: Metrics;
  worker: Worker;
  live: LiveEvents;
  api: FastifyInstance;
  /** The one ready line `keel serve` prints. */
  banner: string;
  /** Stops claiming, drains runs (bounded grace), closes the API and the store. */
  stop(): Promise<void>;
}

const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

/** An opened store, with what only the owner of a SQLite data dir does at start-up. */
export interface OpenedStore {
  store: Store;
  /** SQLite only: expire every lease a previous process left (null on PostgreSQL). */
  expireAllLeases: (() => Promise<number>) | null;
  /** PostgreSQL only: carries model.delta to other processes (null on SQLite). */
  liveRelay: LiveRelay | null;
}

/** Opens the configured store: SQLite (one process owns the data dir) or PostgreSQL. */
export async function openStore(config: KeelConfig, failpoints: Failpoints): Promise<OpenedStore> {
  const { url, durability } = config.store;
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    // Imported here: pg and the PostgreSQL store cost a SQLite keel ~0.2 s of CPU at start.
    const { openPostgresStore } = await import('./store/postgres/index.ts');
    const store = await openPostgresStore({ url, failpoints });
    return { store, expireAllLeases: null, liveRelay: store.live };
  }
  const store = await openSqliteStore({
    path: url.slice('sqlite:'.length),
    durability,
    failpoints,
    ...(config.memory.search_threads === null ? {} : { readThreads: config.memory.search_threads }),
  });
  return { store, expireAllLeases: () => store.expireAllLeases(), liveRelay: null };
}

/** The built-ins, plus the test-only tools a test injected. */
function createTools(extraTools: readonly AnyToolSpec[]): ToolRegistry {
  return createToolRegistry([...builtinTools(), ...extraTools]);
}

function urlFor(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * The providers whose keys a process of `role` needs: one that works runs calls every
 * provider; one that serves the API or works runs embeds memory text with the
 * embedder's provider. So an API process can run without the model keys, and a
 * scheduler without any. Providers a test replaced need none.
 */
function providersNeeded(config: KeelConfig, role: KeelRole, options: KeelOptions): string[] {
  const names = role === 'worker' || role === 'all' ? Object.keys(config.providers) : [];
  const embeds = role !== 'scheduler' && !options.embedder;
  const embedding = embeds ? embedderProvider(config.memory.embedder) : null;
  if (embedding !== null && !names.includes(embedding)) names.push(embedding);
  return names.filter((name) => !Object.hasOwn(options.providers ?? {}, name));
}

export async function startKeel(config: KeelConfig, options: KeelOptions = {}): Promise<Keel> {
  // Refuse an insecure listener, or a missing model key, before touching any data.
  assertListenAllowed(config);
  assertProviderKeys(
    config.providers,
    config.provider_keys,
    providersNeeded(config, options.role ?? 'all', options),
  );
  // A logger passed in is the caller's to close; one made here is closed by stop().
  const { logger, close: closeLogger } = options.logger
    ? { logger: options.logger, close: () => undefined }
    : createLogger(config.log);
  // Before the store opens, so a store that fails to open still says where it looked.
  const files = describeFiles(config);
  logger.info(files.fields, files.message);
  for (const earlier of describeEarlierPaths(config.files)) {
    logger.warn(earlier.fields, earlier.message);
  }
  if (config.files.data_dir_from === 'legacy') {
    logger.warn(
      { data_dir: config.data_dir },
      'keeping the data dir ./.keel of an earlier keel (it holds keel.db); set data_dir or KEEL_DATA_DIR to say so, or move it to the default data dir (docs/configuration.md)',
    );
  }
  const metrics = createMetrics();
  const failpoints = options.failpoints ?? inertFailpoints;
  const opened = await openStore(config, failpoints);
  const { expireAllLeases, liveRelay } = opened;
  const store = options.wrapStore
    ? options.wrapStore(opened.store, config.store.url)
    : opened.store;
  let api: FastifyInstance | null = null;
  try {
    const role = options.role ?? 'all';
    if (store.kind === 'sqlite' && role !== 'all') {
      throw new KeelError(
        'CONFIG_INVALID',
        `--role ${role} needs a PostgreSQL store: one process owns a SQLite data dir, so it runs every role (use --role all, or store.url = "postgres://…")`,
      );
    }
    // A SQLite process owns its data dir: every lease still "running" belongs to a
    // process that is gone, so its runs are reclaimed (resumed) at once. PostgreSQL is
    // shared with live processes: their runs are reclaimed only after lease expiry.
    if (expireAllLeases) {
      const reclaimable = await expireAllLeases();
      if (reclaimable > 0)
        logger.info({ runs: reclaimable }, 'resuming runs of a previous process');
    }

    // On PostgreSQL, deltas also reach the SSE clients of other processes (lossy).
    const live = createLiveEvents({
      ...(liveRelay && { relay: liveRelay }),
      onDropped: (count) => metrics.liveDeltasDropped.inc(count),
    });
    const tools = createTools(options.extraTools ?? []);
    // One embedder per process, from [memory] embedder; glove-sif loads (or first builds)
    // its cache lazily, on the first memory call.
    const embedder = options.embedder ?? createEmbedder(config);
    const memory = createMemoryService({
      store,
      embedder,
      maxBytesPerTenant: config.tenant_limits.memory_bytes,
    });
    const memoryScans = new MaintenanceScans();
    // The public-web boundary: allow_hosts is its only opening (docs/web-boundary.md).
    const web = createWebClient({
      searchUrl: config.web.search_url,
      allowHosts: config.web.allow_hosts,
    });
    // MCP servers per tenant (docs/mcp.md): sessions of this process, a tenant's tools
    // = the built-ins + its servers' tools.
    const compile = createSchemaCompiler();
    const mcpConnect = { settings: config.mcp, secrets: store };
    const mcpSessions = createMcpSessions({ ...mcpConnect, logger });
    const mcp = createMcpService({
      ...mcpConnect,
      store,
      sessions: mcpSessions,
      compile,
      logger,
      maxServers: config.tenant_limits.mcp_servers,
      onDiscoveryFailure: () => metrics.mcpDiscoveryFailures.inc(),
    });
    // WebAssembly tools (docs/wasm-tools.md): the sandbox pool starts with the first call.
    const wasmModules = createCompiledModules(store);
    let wasmPool: WasmPool | null = null;
    const wasmRunner = {
      modules: wasmModules,
      pool: () =>
        (wasmPool ??= createWasmPool({
          size: config.wasm.pool_size,
          maxPerTenant: config.wasm.max_workers_per_tenant,
        })),
    };
    const wasm = createWasmService({
      store,
      modules: wasmModules,
      compile,
      maxTools: config.tenant_limits.wasm_tools,
    });
    const toolsFor = withWasmTools(
      createToolCatalog({ builtins: tools, store, sessions: mcpSessions, compile }),
      { store, runner: wasmRunner, compile },
    );
    // Spans of runs over OTLP (docs/telemetry.md); the SDK loads only with an endpoint.
    const tracer = await loadRunTracer(config.telemetry);
    const worker = createWorker({
      store,
      tracer,
      tools,
      toolsFor,
      toolPorts: (scope) =>
        createToolPorts(
          {
            store,
            web,
            memory: { service: memory, scans: memoryScans },
            maxSchedules: config.tenant_limits.schedules,
            maxArtifactBytes: config.tenant_limits.artifact_bytes,
          },
          scope,
        ),
      ...(options.wrapJournal && { journal: options.wrapJournal(store) }),
      // keel.toml's providers, then test overrides; `fixture` is always there.
      providers: createProviderRegistry({
        ...createConfiguredProviders(config.providers, config.provider_keys),
        ...options.providers,
      }),
      logger,
      metrics,
      failpoints,
      live,
      concurrency: config.workers.concurrency,
      leaseMs: config.workers.lease_ms,
      maxRunningPerTenant: config.tenant_limits.running_runs,
      runningCapWhenAlone: config.tenant_limits.running_runs_when_alone,
      maxAttempts: config.workers.max_attempts,
      usage: store,
      prices: priceBook(config.providers),
    });
    api =
      role === 'api' || role === 'all'
        ? await buildApi({
            ...{ config, store, logger, metrics, live, tools, toolsFor, mcp, wasm, memory },
            providers: [...Object.keys(config.providers), ...Object.keys(options.providers ?? {})],
          })
        : buildRoleHealthServer({ role, store, metrics, http: config.http });
    await api.listen({ host: config.listen.host, port: config.listen.port });
    const address = api.server.address();
    const port = typeof address === 'object' && address ? address.port : config.listen.port;
    const url = urlFor(config.listen.host, port);
    if (options.prepareEmbedder && role !== 'scheduler') prepareInBackground(embedder, logger);
    if (role === 'worker' || role === 'all') {
      // Rediscovery runs beside the worker: a failing server is recorded, never fatal.
      mcp.rediscoverAll().catch((error: unknown) => {
        logger.warn({ error: String(error) }, 'MCP rediscovery stopped');
      });
      worker.start();
    }
    // Webhook deliveries are POSTed by worker processes, like runs are worked there.
    const webhooks = createWebhookWorker({
      store,
      logger,
      settings: config.webhooks,
      max_attempts: config.delivery.max_attempts,
    });
    if (role === 'worker' || role === 'all') webhooks.start();
    // A finished run's history is pruned where runs are worked ([retention]).
    const retention = createRunRetention({
      store,
      ages: retentionAges(config.retention),
      batchRows: config.retention.batch_rows,
      intervalMs: config.retention.interval_ms,
      logger,
    });
    if (role === 'worker' || role === 'all') retention.start();
    // One scheduler per scheduler process; due schedules become queued runs for workers.
    const scheduler = createScheduler({
      store,
      maxQueued: config.tenant_limits.queued_runs,
      logger,
      heartbeat: { store, holder: `${hostname()}:${process.pid}` },
    });
    if (role === 'scheduler' || role === 'all') scheduler.start();
    // Processes serving the API say so loudly when schedules are due and none runs.
    const schedulerWatch = createSchedulerWatch({ store, logger, metrics });
    if (role === 'api' || role === 'all') schedulerWatch.start();

    const app = api;
    let stopped: Promise<void> | null = null;
    return {
      url,
      config,
      store,
      logger,
      metrics,
      worker,
      live,
      api: app,
      banner: `keel listening on ${url} (store ${store.kind === 'postgres' ? store.description : config.store.url}${role === 'all' ? '' : `, role ${role}`})`,
      stop() {
        stopped ??= (async () => {
          // Stop taking requests and drain the runs together; the store closes last.
          schedulerWatch.stop();
          await Promise.all([
            scheduler.stop(),
            webhooks.stop(),
            retention.stop(),
            worker.stop({ graceMs: options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS }),
            app.close(),
          ]);
          await mcpSessions.closeAll();
          await (wasmPool as WasmPool | null)?.close();
          await embedder.close?.();
          await tracer.shutdown().catch(() => undefined);
          await store.close();
          closeLogger();
        })();
        return stopped;
      },
    };
  } catch (error) {
    await api?.close().catch(() => undefined);
    await store.close();
    closeLogger();
    throw error;
  }
}
