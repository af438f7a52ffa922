// A real SQLite store in a temp dir + a worker with the fixture model, for the runtime
// tests. Retries back off in milliseconds here so retry tests stay fast.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { inertFailpoints } from '../src/failpoints.ts';
import { createMetrics } from '../src/metrics.ts';
import type { Metrics } from '../src/metrics.ts';
import type { ModelRequest, Provider } from '../src/providers/provider.ts';
import { createFixtureProvider } from '../src/providers/fixture.ts';
import { createProviderRegistry } from '../src/providers/registry.ts';
import { enqueueTurn } from '../src/runtime/enqueue.ts';
import type { TurnRequest } from '../src/runtime/enqueue.ts';
import { waitForRun } from '../src/runtime/wait.ts';
import type { Worker, WorkerOptions } from '../src/runtime/worker.ts';
import { createWorker } from '../src/runtime/worker.ts';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import type { SqliteStore } from '../src/store/sqlite/index.ts';
import { builtinTools } from '../src/tools/builtin/index.ts';
import type { ToolRegistry } from '../src/tools/registry.ts';
import { createToolRegistry } from '../src/tools/registry.ts';
import type { AgentSpec, Run, TraceEvent } from '../src/types.ts';
import { agentSpec } from './helpers/agent-spec.ts';

export const TENANT = 't1';

export const AGENT_DEFAULTS: AgentSpec = agentSpec();

/** Wraps the fixture model to see every request, concurrency and aborts. */
export interface RecordingModel extends Provider {
  requests: ModelRequest[];
  inFlight: number;
  maxInFlight: number;
  aborted: number;
}

export function recordingFixture(): RecordingModel {
  const inner = createFixtureProvider();
  const model: RecordingModel = {
    name: 'fixture',
    requests: [],
    inFlight: 0,
    maxInFlight: 0,
    aborted: 0,
    async complete(request) {
      model.requests.push(request);
      model.inFlight += 1;
      model.maxInFlight = Math.max(model.maxInFlight, model.inFlight);
      try {
        return await inner.complete(request);
      } catch (error) {
        if (request.signal.aborted) model.aborted += 1;
        throw error;
      } finally {
        model.inFlight -= 1;
      }
    },
  };
  return model;
}

export interface Harness {
  dir: string;
  /** SQLite: the tests also use its owner-only expireAllLeases. */
  store: SqliteStore;
  worker: Worker;
  metrics: Metrics;
  model: RecordingModel;
  putAgent(name: string, spec?: Partial<AgentSpec>): Promise<void>;
  submit(text: string, turn?: Partial<TurnRequest>): Promise<string>;
  wait(runId: string, timeoutMs?: number): Promise<Run>;
  trace(runId: string): Promise<TraceEvent[]>;
  close(): Promise<void>;
}

export interface HarnessOptions extends Partial<
  Pick<WorkerOptions, 'concurrency' | 'leaseMs' | 'pollMs' | 'maxAttempts' | 'toolPorts' | 'prices'>
> {
  providers?: Record<string, Provider>;
  /** Default: the built-in tools. */
  tools?: ToolRegistry;
  /** Do not start the worker (tests that stage the store first). */
  idle?: boolean;
}

export async function openHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-runtime-'));
  const store = await openSqliteStore({ path: join(dir, 'keel.db'), durability: 'process' });
  const metrics = createMetrics();
  const model = recordingFixture();
  const worker = createWorker({
    store,
    tools: options.tools ?? createToolRegistry(builtinTools()),
    ...(options.maxAttempts && { maxAttempts: options.maxAttempts }),
    ...(options.toolPorts && { toolPorts: options.toolPorts }),
    ...(options.prices && { prices: options.prices }),
    usage: store,
    providers: createProviderRegistry({ fixture: model, ...options.providers }),
    logger: pino({ level: 'silent' }),
    metrics,
    failpoints: inertFailpoints,
    concurrency: options.concurrency ?? 4,
    leaseMs: options.leaseMs ?? 30_000,
    pollMs: options.pollMs ?? 1000,
    retry: { maxRetries: 3, baseDelayMs: 5, maxDelayMs: 50 },
  });
  await store.createTenant(TENANT, {});
  await store.putAgent(TENANT, 'a', AGENT_DEFAULTS);
  if (!options.idle) worker.start();
  return {
    dir,
    store,
    worker,
    metrics,
    model,
    async putAgent(name, spec = {}) {
      await store.putAgent(TENANT, name, { ...AGENT_DEFAULTS, ...spec });
    },
    async submit(text, turn = {}) {
      const { run } = await enqueueTurn(store, {
        tenant: TENANT,
        agent: 'a',
        scope: 's',
        payload: { text },
        ...turn,
      });
      return run.run_id;
    },
    async wait(runId, timeoutMs = 10_000) {
      const result = await waitForRun(store, TENANT, runId, timeoutMs);
      if (!result) throw new Error(`run ${runId} not found`);
      if (result.timed_out) throw new Error(`run ${runId} still ${result.run.status}`);
      return result.run;
    },
    async trace(runId) {
      return (await store.getTrace(TENANT, runId, 0, 1000)) ?? [];
    },
    async close() {
      await worker.stop({ graceMs: 1000 });
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function types(events: TraceEvent[]): string[] {
  return events.map((event) => event.type);
}
