// The only reader of process.env and keel.toml. Precedence: flags > env > keel.toml >
// defaults. Validated (unknown keys are an error naming the key) and frozen.

import { existsSync, readFileSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import type { FileLocations } from './config-locations.ts';
import { findConfigFile, findDataDir, findFileStoreUrl } from './config-locations.ts';
import { KeelError } from './errors.ts';
import { defaultMaxWorkersPerTenant, defaultPoolSize } from './wasm/pool.ts';
import { parseAllowedHost } from './web/allow-hosts.ts';

const providerSchema = z.strictObject({
  type: z.enum(['openai', 'openai-compatible', 'anthropic']),
  base_url: z.string().url().optional(),
  /** The NAME of the env var holding the key; unset or empty at `keel serve` → refused. */
  api_key_env: z.string().min(1).optional(),
  /** One model request, sent to last byte; past it MODEL_TIMEOUT (docs/providers.md). */
  timeout_ms: z.number().int().min(1000).max(3_600_000).optional(),
  /**
   * "when-watched" (default): streamed only while someone watches the run live. true:
   * every request streamed. false: non-streaming requests, for servers whose streaming is
   * broken (docs/agent-loop.md, Providers).
   */
  stream: z
    .union([z.boolean(), z.literal('when-watched')], {
      error: 'expected true, false or "when-watched"',
    })
    .optional(),
  /** USD per million tokens per model (the part after "provider/"); usage costs 0 without. */
  prices: z
    .record(
      z.string().min(1),
      z.strictObject({ input: z.number().min(0).max(1e6), output: z.number().min(0).max(1e6) }),
    )
    .optional(),
});

// [mcp.stdio.<name>]: an operator-declared stdio MCP server (docs/mcp.md). Only the
// operator starts programs on the host; tenants attach these by name.
/** `allow_hosts` of [web], [mcp] and [webhooks]: host or host:port (src/web/allow-hosts.ts). */
const allowHostsSchema = z.array(
  z.string().superRefine((entry, context) => {
    const parsed = parseAllowedHost(entry);
    if (typeof parsed === 'string') context.addIssue({ code: 'custom', message: parsed });
  }),
);

const MCP_SERVER_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;
const mcpStdioSchema = z.strictObject({
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  /** Variables of the server's environment → names of keel's environment variables. */
  env_from: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string().min(1)).optional(),
  /** Tenants that may attach it; all when omitted. */
  tenants: z.array(z.string().min(1)).optional(),
});

const fileSchema = z.strictObject({
  listen: z.string().optional(),
  data_dir: z.string().min(1).optional(),
  store: z
    .strictObject({
      url: z.string().min(1).optional(),
      durability: z.enum(['full', 'process']).optional(),
    })
    .optional(),
  auth: z.strictObject({ admin_token_env: z.string().min(1).optional() }).optional(),
  workers: z
    .strictObject({
      concurrency: z.number().int().min(1).max(1024).optional(),
      lease_ms: z.number().int().min(1000).max(3_600_000).optional(),
      max_attempts: z.number().int().min(1).max(1000).optional(),
    })
    .optional(),
  limits: z
    .strictObject({
      turn_body_bytes: z.number().int().min(1024).optional(),
      artifact_bytes: z.number().int().min(1024).optional(),
    })
    .optional(),
  providers: z.record(z.string(), providerSchema).optional(),
  memory: z
    .strictObject({
      embedder: z.string().min(1).optional(),
      search_threads: z.number().int().min(0).max(64).optional(),
    })
    .optional(),
  web: z
    .strictObject({
      search_url: z.string().optional(),
      allow_hosts: allowHostsSchema.optional(),
    })
    .optional(),
  delivery: z
    .strictObject({ max_attempts: z.number().int().min(1).max(1000).optional() })
    .optional(),
  webhooks: z
    .strictObject({
      allow_hosts: allowHostsSchema.optional(),
      timeout_ms: z.number().int().min(100).max(120_000).optional(),
    })
    .optional(),
  log: z.strictObject({ level: z.string().optional() }).optional(),
  tenant_limits: z
    .strictObject({
      running_runs: z.number().int().min(1).max(1_000_000).optional(),
      queued_runs: z.number().int().min(1).optional(),
      schedules: z.number().int().min(1).optional(),
      agents: z.number().int().min(1).optional(),
      mcp_servers: z.number().int().min(1).optional(),
      wasm_tools: z.number().int().min(1).optional(),
      secrets: z.number().int().min(1).optional(),
      webhooks: z.number().int().min(1).optional(),
      requests_per_s: z.number().min(0.01).optional(),
      request_burst: z.number().int().min(1).optional(),
      list_page_bytes: z.number().int().min(65_536).optional(),
      memory_bytes: z.number().int().min(0).optional(),
      artifact_bytes: z.number().int().min(0).optional(),
    })
    .optional(),
  // --- [http]: connection limits and timeouts of the HTTP server (issue 12 item 2) ---
  http: z
    .strictObject({
      request_timeout_ms: z.number().int().min(1000).max(3_600_000).optional(),
      headers_timeout_ms: z.number().int().min(1000).max(600_000).optional(),
      idle_timeout_ms: z.number().int().min(1000).max(3_600_000).optional(),
      keep_alive_timeout_ms: z.number().int().min(100).max(600_000).optional(),
      max_requests_per_socket: z.number().int().min(0).max(1_000_000).optional(),
      max_connections: z.number().int().min(1).max(1_000_000).optional(),
      max_connections_per_address: z.number().int().min(1).max(1_000_000).optional(),
      max_streams_per_tenant: z.number().int().min(1).max(100_000).optional(),
    })
    .optional(),
  // --- end [http] ---
  mcp: z
    .strictObject({
      stdio: z.record(z.string(), mcpStdioSchema).optional(),
      idle_ms: z.number().int().min(1000).max(86_400_000).optional(),
      max_message_bytes: z.number().int().min(1024).max(67_108_864).optional(),
      allow_hosts: allowHostsSchema.optional(),
    })
    .optional(),
  // --- [wasm]: the sandbox pool of WebAssembly tools (docs/wasm-tools.md) ---
  wasm: z
    .strictObject({
      pool_size: z.number().int().min(1).max(64).optional(),
      max_workers_per_tenant: z.number().int().min(1).max(64).optional(),
    })
    .optional(),
  // --- end [wasm] ---
  // --- [retention]: how long a finished run's history is kept (docs/configuration.md) ---
  retention: z
    .strictObject({
      events_days: z.number().int().min(0).max(36_500).optional(),
      entries_days: z.number().int().min(0).max(36_500).optional(),
      runs_days: z.number().int().min(0).max(36_500).optional(),
      batch_rows: z.number().int().min(10).max(10_000).optional(),
      interval_ms: z.number().int().min(1000).max(86_400_000).optional(),
    })
    .optional(),
  // --- end [retention] ---
  telemetry: z
    .strictObject({
      otlp_endpoint: z.string().url().optional(),
      headers: z.record(z.string(), z.string()).optional(),
      headers_env: z.record(z.string(), z.string().min(1)).optional(),
      service_name: z.string().min(1).optional(),
      export_delay_ms: z.number().int().min(10).max(60_000).optional(),
    })
    .optional(),
});

export type ProviderConfig = z.infer<typeof providerSchema>;

export interface KeelConfig {
  listen: { host: string; port: number };
  data_dir: string;
  /** The config file read and what chose data_dir (src/config-locations.ts). */
  files: FileLocations;
  store: { url: string; durability: 'full' | 'process' };
  /** The admin token itself (read from the env var the config names), or null. */
  admin_token: string | null;
  /** max_attempts: crashed attempts a run may have before it fails RUN_CRASHED. */
  workers: { concurrency: number; lease_ms: number; max_attempts: number };
  limits: { turn_body_bytes: number; artifact_bytes: number };
  providers: Record<string, ProviderConfig>;
  /**
   * Provider API keys, read once here from the env vars the providers name (undefined:
   * none named, or the variable unset or empty; keel serve refuses the latter).
   */
  provider_keys: Record<string, string | undefined>;
  /** search_threads null: the store's default (one per core, at most its vector shards). */
  memory: { embedder: string; search_threads: number | null };
  web: { search_url: string; allow_hosts: string[] };
  delivery: { max_attempts: number };
  /** Signed webhooks (docs/channels.md): private hosts allowed, time per POST. */
  webhooks: { allow_hosts: string[]; timeout_ms: number };
  log: { level: string; pretty: boolean };
  http: HttpSettings;
  /** Fairness between tenants (docs/configuration.md, [tenant_limits]). */
  tenant_limits: TenantLimits;
  mcp: McpSettings;
  telemetry: TelemetrySettings;
  wasm: WasmSettings;
  retention: RetentionSettings;
}

// ---- [retention]: a finished run's history (src/runtime/retention.ts) ----------------
// A finished run's trace events (events_days) and journal entries (entries_days) are
// deleted that many days after it finished; the run itself (status, input, output) is
// kept unless runs_days is set. 0 = keep forever. The journal is what grows with every
// turn; the run row is what the API answers with, and what request_id replays find.

export interface RetentionSettings {
  events_days: number;
  entries_days: number;
  runs_days: number;
  /** Rows of one table one pruning transaction deletes at most. */
  batch_rows: number;
  /** How often a pass runs. */
  interval_ms: number;
}

function retentionSettingsOf(file: z.infer<typeof fileSchema>['retention']): RetentionSettings {
  const runsDays = file?.runs_days ?? 0;
  // The journal goes after 30 days unless the whole run goes sooner.
  const journalDays = runsDays > 0 ? Math.min(30, runsDays) : 30;
  const settings = {
    events_days: file?.events_days ?? journalDays,
    entries_days: file?.entries_days ?? journalDays,
    runs_days: runsDays,
    batch_rows: file?.batch_rows ?? 500,
    interval_ms: file?.interval_ms ?? 60_000,
  };
  for (const part of ['events_days', 'entries_days'] as const) {
    const days = settings[part];
    if (settings.runs_days > 0 && (days === 0 || days > settings.runs_days)) {
      throw new KeelError(
        'CONFIG_INVALID',
        `retention.${part}: must be 1–${settings.runs_days} when retention.runs_days is set (a deleted run takes its history with it)`,
      );
    }
  }
  return settings;
}
// --- end [retention] ---

// ---- [wasm]: the sandbox pool of WebAssembly tools ---------------------------------
// pool_size worker threads per process (default one per core, 1–4); a tenant holds at
// most max_workers_per_tenant of them at once (default half the pool, rounded up), so
// one tenant flooding calls leaves workers to the others.

export interface WasmSettings {
  pool_size: number;
  max_workers_per_tenant: number;
}

function wasmSettingsOf(file: z.infer<typeof fileSchema>['wasm']): WasmSettings {
  const poolSize = file?.pool_size ?? defaultPoolSize();
  const perTenant = file?.max_workers_per_tenant ?? defaultMaxWorkersPerTenant(poolSize);
  if (perTenant > poolSize) {
    throw new KeelError(
      'CONFIG_INVALID',
      `wasm.max_workers_per_tenant: ${perTenant} is more than wasm.pool_size (${poolSize})`,
    );
  }
  return { pool_size: poolSize, max_workers_per_tenant: perTenant };
}
// --- end [wasm] ---

// ---- [tenant_limits]: fairness between tenants -------------------------------------
// One greedy tenant must not slow the others: it gets at most `running_runs` worker
// slots (counted across all processes), `queued_runs` queued runs, `schedules` schedules,
// `agents` agents, `mcp_servers` MCP servers, `wasm_tools` WebAssembly tools, `secrets`
// secrets and `webhooks` webhooks (each list the tool catalogs or agent checks read whole),
// and a token bucket of
// `requests_per_s` (burst `request_burst`) on its routes; list pages stop at
// `list_page_bytes` of items. Its memory facts may hold `memory_bytes` and its artifacts
// `artifact_bytes` (src/store/rules/tenant-usage.ts), so one tenant cannot fill the disk.

export interface TenantLimits {
  running_runs: number;
  /**
   * Whether running_runs binds while the store holds only one tenant: true when the
   * operator set running_runs, false for the default cap (so one tenant uses every slot).
   */
  running_runs_when_alone: boolean;
  queued_runs: number;
  schedules: number;
  agents: number;
  mcp_servers: number;
  wasm_tools: number;
  secrets: number;
  webhooks: number;
  requests_per_s: number;
  request_burst: number;
  list_page_bytes: number;
  memory_bytes: number;
  artifact_bytes: number;
}

/**
 * Leaves a quarter of the worker slots (at least one when there are two) to others; it
 * binds only while the store holds more than one tenant (tenant-fairness.ts).
 */
export function defaultRunningRuns(concurrency: number): number {
  return Math.max(1, Math.floor((concurrency * 3) / 4));
}

function tenantLimitsOf(
  file: z.infer<typeof fileSchema>['tenant_limits'],
  concurrency: number,
): TenantLimits {
  return {
    running_runs: file?.running_runs ?? defaultRunningRuns(concurrency),
    running_runs_when_alone: file?.running_runs !== undefined,
    queued_runs: file?.queued_runs ?? 10_000,
    schedules: file?.schedules ?? 1_000,
    agents: file?.agents ?? 1_000,
    mcp_servers: file?.mcp_servers ?? 100,
    wasm_tools: file?.wasm_tools ?? 100,
    secrets: file?.secrets ?? 1_000,
    webhooks: file?.webhooks ?? 100,
    requests_per_s: file?.requests_per_s ?? 200,
    request_burst: file?.request_burst ?? 400,
    list_page_bytes: file?.list_page_bytes ?? 4_194_304,
    memory_bytes: file?.memory_bytes ?? 268_435_456,
    artifact_bytes: file?.artifact_bytes ?? 1_073_741_824,
  };
}
// ---- end [tenant_limits] -------------------------------------------------------------
// --- [http] settings (issue 12 item 2); docs/configuration.md explains each ---
export interface HttpSettings {
  /** Whole request (headers and body) must arrive within this; then 408 and close. */
  request_timeout_ms: number;
  /** The headers must arrive within this (slowloris). */
  headers_timeout_ms: number;
  /** A socket with no traffic either way for this long is closed (a stalled body). */
  idle_timeout_ms: number;
  /** An idle keep-alive socket between requests is closed after this. */
  keep_alive_timeout_ms: number;
  /** Requests one keep-alive socket may carry before it is closed; 0 = no limit. */
  max_requests_per_socket: number;
  /** Open sockets at once; further connections are dropped on accept. */
  max_connections: number;
  /**
   * Open sockets at once from one client address (an IPv6 client: its /64); further
   * connections from it are closed on accept, so one address cannot take every slot.
   */
  max_connections_per_address: number;
  /** Open SSE streams and long-poll waits per tenant; more get 429 RATE_LIMITED. */
  max_streams_per_tenant: number;
}

export const HTTP_DEFAULTS: HttpSettings = {
  request_timeout_ms: 30_000,
  headers_timeout_ms: 10_000,
  idle_timeout_ms: 60_000,
  keep_alive_timeout_ms: 5_000,
  max_requests_per_socket: 1000,
  max_connections: 1024,
  max_connections_per_address: 256,
  max_streams_per_tenant: 256,
};
// --- end [http] ---

// --- [mcp]: MCP servers (docs/mcp.md) ---
export interface McpStdioDeclaration {
  /** Absolute path (a bare name is resolved on keel's PATH once, here). */
  command: string;
  args: string[];
  /** The server's whole environment: declared variables with values read from keel's. */
  env: Record<string, string>;
  /** Tenants that may attach it; null = every tenant. */
  tenants: string[] | null;
}

export interface McpSettings {
  stdio: Record<string, McpStdioDeclaration>;
  /** A tenant's session with no call for this long is closed. */
  idle_ms: number;
  /** A server message larger than this ends the session (stdio) or the call. */
  max_message_bytes: number;
  /** Private hosts a tenant's HTTP server may use (the web boundary's one opening). */
  allow_hosts: string[];
}

function resolveCommand(name: string, command: string, env: NodeJS.ProcessEnv, cwd: string) {
  if (command.includes('/')) return resolve(cwd, command);
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, command))) return join(dir, command);
  }
  throw new KeelError(
    'CONFIG_INVALID',
    `mcp.stdio.${name}.command: "${command}" is not on PATH (the server gets no PATH of its own; give an absolute path)`,
  );
}

function mcpSettingsOf(
  file: z.infer<typeof fileSchema>['mcp'],
  env: NodeJS.ProcessEnv,
  cwd: string,
): McpSettings {
  const stdio: Record<string, McpStdioDeclaration> = {};
  for (const [name, declared] of Object.entries(file?.stdio ?? {})) {
    if (!MCP_SERVER_NAME.test(name)) {
      throw new KeelError(
        'CONFIG_INVALID',
        `mcp.stdio.${name}: a server name must match ${MCP_SERVER_NAME.source}`,
      );
    }
    const serverEnv: Record<string, string> = {};
    for (const [variable, from] of Object.entries(declared.env_from ?? {})) {
      const value = env[from];
      if (value === undefined) {
        throw new KeelError(
          'CONFIG_INVALID',
          `mcp.stdio.${name}.env_from.${variable}: keel's environment has no ${from}`,
        );
      }
      serverEnv[variable] = value;
    }
    stdio[name] = {
      command: resolveCommand(name, declared.command, env, cwd),
      args: declared.args ?? [],
      env: serverEnv,
      tenants: declared.tenants ?? null,
    };
  }
  return {
    stdio,
    idle_ms: file?.idle_ms ?? 300_000,
    max_message_bytes: file?.max_message_bytes ?? 1_048_576,
    allow_hosts: file?.allow_hosts ?? [],
  };
}
// --- end [mcp] ---

// --- [telemetry]: OpenTelemetry traces over OTLP/HTTP (docs/telemetry.md) ---
export interface TelemetrySettings {
  /** The OTLP/HTTP traces URL (e.g. http://127.0.0.1:4318/v1/traces); null = no tracing. */
  otlp_endpoint: string | null;
  /** Headers of every export request: `headers`, plus `headers_env` read from the env. */
  headers: Record<string, string>;
  service_name: string;
  /** Ended spans wait at most this long before they are exported (batching). */
  export_delay_ms: number;
}

function telemetrySettingsOf(
  file: z.infer<typeof fileSchema>['telemetry'],
  env: NodeJS.ProcessEnv,
): TelemetrySettings {
  const headers: Record<string, string> = { ...file?.headers };
  for (const [header, from] of Object.entries(file?.headers_env ?? {})) {
    const value = env[from];
    if (value === undefined) {
      throw new KeelError(
        'CONFIG_INVALID',
        `telemetry.headers_env.${header}: keel's environment has no ${from}`,
      );
    }
    headers[header] = value;
  }
  const endpoint = file?.otlp_endpoint ?? null;
  if (endpoint !== null && !/^https?:\/\//.test(endpoint)) {
    throw new KeelError(
      'CONFIG_INVALID',
      `telemetry.otlp_endpoint: expected an http:// or https:// URL, got "${endpoint}"`,
    );
  }
  return {
    otlp_endpoint: endpoint,
    headers,
    service_name: file?.service_name ?? 'keel',
    export_delay_ms: file?.export_delay_ms ?? 1000,
  };
}
// --- end [telemetry] ---

export interface ConfigFlags {
  config?: string;
  listen?: string;
  /** `keel serve --port N` (`npm start -- --port N`): the port of `listen`, host kept. */
  port?: number;
  data_dir?: string;
  store_url?: string;
  pretty?: boolean;
}

export function parseListen(value: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value.trim());
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65535) {
    throw new KeelError('CONFIG_INVALID', `listen: expected HOST:PORT, got "${value}"`);
  }
  return { host: (match[1] ?? match[2]) as string, port };
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    const prefix = issue.path.length > 0 ? `${issue.path.join('.')}.` : '';
    return `unknown key ${issue.keys.map((key) => `"${prefix}${key}"`).join(', ')}`;
  }
  return `${issue.path.join('.') || '(root)'}: ${issue.message}`;
}

function readConfigFile(path: string): z.infer<typeof fileSchema> {
  let raw: unknown;
  try {
    raw = parseToml(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new KeelError('CONFIG_INVALID', `${path}: ${(error as Error).message}`);
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    throw new KeelError(
      'CONFIG_INVALID',
      `${path}: ${parsed.error.issues.map(describeIssue).join('; ')}`,
    );
  }
  return parsed.data;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** Reads flags, env and keel.toml once; the result is frozen and passed down explicitly. */
/**
 * Fault points and seeded bugs break guarantees on purpose, and the test sink tools reach a
 * loopback URL outside the web boundary; a production process has no way to turn them on. Their env vars are refused rather than ignored, so an operator who
 * sets one learns at once that it does nothing here; tests inject them through
 * test/helpers/keel-test-serve.ts, which clears these vars before loading the config.
 */
export const TEST_ONLY_ENV = [
  'KEEL_TEST_FAILPOINTS',
  'KEEL_FAILPOINTS',
  'KEEL_TEST_SEEDED_BUGS',
  'KEEL_TEST_EFFECT_SINK_URL',
  'KEEL_TEST_FAILPOINTS_STDIN',
];

function refuseTestSwitches(env: NodeJS.ProcessEnv): void {
  const set = TEST_ONLY_ENV.filter((name) => env[name] !== undefined && env[name] !== '');
  if (set.length > 0) {
    throw new KeelError(
      'CONFIG_INVALID',
      `${set.join(', ')}: test-only switches, refused by keel (only the test suite can inject fault points, seeded bugs and test tools)`,
    );
  }
}

export function loadConfig(
  flags: ConfigFlags = {},
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): KeelConfig {
  refuseTestSwitches(env);
  const configPath = findConfigFile(flags.config, env, cwd, existsSync);
  const file = configPath ? readConfigFile(configPath) : {};
  // Relative paths in keel.toml are relative to keel.toml, not to where keel was started.
  const fileDir = configPath ? dirname(configPath) : cwd;
  const dataDir = findDataDir(
    { flag: flags.data_dir, file: file.data_dir, configFile: configPath },
    env,
    cwd,
    existsSync,
  );
  const storeUrl = flags.store_url ?? env.KEEL_STORE_URL;
  const fileStore =
    storeUrl === undefined && file.store?.url !== undefined
      ? findFileStoreUrl(file.store.url, configPath, cwd, existsSync)
      : null;
  const adminTokenEnv = file.auth?.admin_token_env ?? 'KEEL_ADMIN_TOKEN';
  const adminToken = env[adminTokenEnv] ?? env.KEEL_ADMIN_TOKEN ?? null;
  if (adminToken !== null && adminToken.length < 16) {
    throw new KeelError(
      'CONFIG_INVALID',
      `${adminTokenEnv}: the admin token needs at least 16 characters`,
    );
  }
  const maxConnections = file.http?.max_connections ?? HTTP_DEFAULTS.max_connections;
  const http: HttpSettings = {
    ...HTTP_DEFAULTS,
    // Unset: a quarter of max_connections, so the other addresses keep three quarters.
    max_connections_per_address: Math.max(1, Math.floor(maxConnections / 4)),
    ...file.http,
  };
  if (http.max_connections_per_address > http.max_connections) {
    throw new KeelError(
      'CONFIG_INVALID',
      'http.max_connections_per_address: must not exceed http.max_connections',
    );
  }
  if (http.headers_timeout_ms > http.request_timeout_ms) {
    throw new KeelError(
      'CONFIG_INVALID',
      'http.headers_timeout_ms: must not exceed http.request_timeout_ms (the headers are part of the request)',
    );
  }
  const providers = file.providers ?? {};
  const providerKeys: Record<string, string | undefined> = {};
  for (const [name, provider] of Object.entries(providers)) {
    if (name === 'fixture') {
      throw new KeelError('CONFIG_INVALID', 'providers.fixture: the name "fixture" is built in');
    }
    // An empty variable is no key (`export OPENAI_API_KEY=` is a slip, not a key).
    providerKeys[name] = (provider.api_key_env && env[provider.api_key_env]) || undefined;
  }

  const config: KeelConfig = {
    listen: {
      ...parseListen(flags.listen ?? env.KEEL_LISTEN ?? file.listen ?? '127.0.0.1:8080'),
      ...(flags.port !== undefined && { port: flags.port }),
    },
    data_dir: dataDir.path,
    files: {
      config: configPath,
      data_dir_from: dataDir.from,
      earlier_paths: [dataDir.earlier, fileStore?.earlier ?? null].filter((p) => p !== null),
    },
    store: {
      url:
        storeUrl !== undefined
          ? normalizeStoreUrl(storeUrl, cwd)
          : normalizeStoreUrl(fileStore?.url ?? `sqlite:${dataDir.path}/keel.db`, fileDir),
      durability: file.store?.durability ?? 'full',
    },
    admin_token: adminToken,
    workers: {
      concurrency: file.workers?.concurrency ?? 8,
      lease_ms: file.workers?.lease_ms ?? 30_000,
      max_attempts: file.workers?.max_attempts ?? 5,
    },
    limits: {
      turn_body_bytes: file.limits?.turn_body_bytes ?? 1_048_576,
      artifact_bytes: file.limits?.artifact_bytes ?? 33_554_432,
    },
    providers,
    provider_keys: providerKeys,
    memory: {
      embedder: file.memory?.embedder ?? 'glove-sif',
      search_threads: file.memory?.search_threads ?? null,
    },
    web: { search_url: file.web?.search_url ?? '', allow_hosts: file.web?.allow_hosts ?? [] },
    delivery: { max_attempts: file.delivery?.max_attempts ?? 10 },
    webhooks: {
      allow_hosts: file.webhooks?.allow_hosts ?? [],
      timeout_ms: file.webhooks?.timeout_ms ?? 10_000,
    },
    log: {
      level: env.KEEL_LOG_LEVEL ?? file.log?.level ?? 'info',
      pretty: flags.pretty ?? false,
    },
    http,
    tenant_limits: tenantLimitsOf(file.tenant_limits, file.workers?.concurrency ?? 8),
    mcp: mcpSettingsOf(file.mcp, env, fileDir),
    telemetry: telemetrySettingsOf(file.telemetry, env),
    wasm: wasmSettingsOf(file.wasm),
    retention: retentionSettingsOf(file.retention),
  };
  return deepFreeze(config);
}

function normalizeStoreUrl(url: string, cwd: string): string {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    return `sqlite:${isAbsolute(path) ? path : resolve(cwd, path)}`;
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return url;
  throw new KeelError(
    'CONFIG_INVALID',
    `store.url: expected "sqlite:PATH" or "postgres://…", got "${url}"`,
  );
}

export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127(\.\d{1,3}){3}$/.test(bare);
}
