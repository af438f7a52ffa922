// Prometheus metrics (names prefixed keel_). One registry per keel instance, created by
// the composition root and passed down; never prom-client's global registry.

import { Counter, Gauge, Histogram, Registry } from 'prom-client';

const LATENCY_BUCKETS_SECONDS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120];

export interface Metrics {
  readonly registry: Registry;
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly runsFinished: Counter<'status'>;
  readonly runDuration: Histogram<'status'>;
  readonly modelCallDuration: Histogram<'outcome'>;
  readonly toolCallDuration: Histogram<'tool' | 'outcome'>;
  readonly checkpointDuration: Histogram;
  readonly leaseReclaims: Counter;
  readonly mcpDiscoveryFailures: Counter;
  readonly runsByStatus: Gauge<'status'>;
  readonly queueDepth: Gauge;
  readonly deliveriesByStatus: Gauge<'status'>;
  readonly liveDeltasDropped: Counter;
  readonly schedulesDueWithoutScheduler: Gauge;
  readonly modelTokens: Counter<'model' | 'kind'>;
  readonly modelCostUsd: Counter<'model'>;
  readonly oldestQueuedAge: Gauge;
  readonly schedulesFailing: Gauge;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  const registers = [registry];
  return {
    registry,
    httpRequests: new Counter({
      name: 'keel_http_requests_total',
      help: 'HTTP requests answered, by route and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    }),
    runsFinished: new Counter({
      name: 'keel_runs_finished_total',
      help: 'Runs that reached a terminal status in this process',
      labelNames: ['status'],
      registers,
    }),
    runDuration: new Histogram({
      name: 'keel_run_duration_seconds',
      help: 'Wall time of a run attempt from claim to terminal status',
      labelNames: ['status'],
      buckets: LATENCY_BUCKETS_SECONDS,
      registers,
    }),
    modelCallDuration: new Histogram({
      name: 'keel_model_call_duration_seconds',
      help: 'Latency of one provider call',
      labelNames: ['outcome'],
      buckets: LATENCY_BUCKETS_SECONDS,
      registers,
    }),
    toolCallDuration: new Histogram({
      name: 'keel_tool_call_duration_seconds',
      help: 'Latency of one tool call',
      labelNames: ['tool', 'outcome'],
      buckets: LATENCY_BUCKETS_SECONDS,
      registers,
    }),
    checkpointDuration: new Histogram({
      name: 'keel_checkpoint_duration_seconds',
      help: 'Latency of one durable checkpoint write (entries + events)',
      buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 1],
      registers,
    }),
    leaseReclaims: new Counter({
      name: 'keel_lease_reclaims_total',
      help: 'Runs claimed again after their previous attempt stopped (resume)',
      registers,
    }),
    mcpDiscoveryFailures: new Counter({
      name: 'keel_mcp_discovery_failures_total',
      help: 'MCP servers whose rediscovery at startup failed (recorded as last_error)',
      registers,
    }),
    runsByStatus: new Gauge({
      name: 'keel_runs',
      help: 'Runs in the store by status (refreshed on scrape)',
      labelNames: ['status'],
      registers,
    }),
    queueDepth: new Gauge({
      name: 'keel_queue_depth',
      help: 'Queued runs in the store (refreshed on scrape)',
      registers,
    }),
    deliveriesByStatus: new Gauge({
      name: 'keel_deliveries',
      help: 'Deliveries in the store by status (refreshed on scrape)',
      labelNames: ['status'],
      registers,
    }),
    liveDeltasDropped: new Counter({
      name: 'keel_live_deltas_dropped_total',
      help: 'model.delta messages not relayed to other processes (lossy by design; PostgreSQL)',
      registers,
    }),
    schedulesDueWithoutScheduler: new Gauge({
      name: 'keel_schedules_due_without_scheduler',
      help: 'Enabled schedules overdue while no scheduler has run recently (0 = fine)',
      registers,
    }),
    modelTokens: new Counter({
      name: 'keel_model_tokens_total',
      help: 'Tokens of recorded model responses by model and kind (input, output)',
      labelNames: ['model', 'kind'],
      registers,
    }),
    modelCostUsd: new Counter({
      name: 'keel_model_cost_usd_total',
      help: 'Cost in USD of recorded model responses by model (keel.toml prices)',
      labelNames: ['model'],
      registers,
    }),
    oldestQueuedAge: new Gauge({
      name: 'keel_oldest_queued_age_seconds',
      help: 'How long the oldest queued run has waited, 0 when none is queued (refreshed on scrape)',
      registers,
    }),
    schedulesFailing: new Gauge({
      name: 'keel_schedules_failing',
      help: 'Schedules whose last fire recorded an error (refreshed on scrape)',
      registers,
    }),
  };
}
