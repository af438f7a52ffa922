// Operations: liveness, readiness, Prometheus metrics and the OpenAPI document.
// Everything but /metrics is open; /metrics needs the admin token when one is
// configured. The console (`GET /`) is src/console/plugin.ts.

import { KeelError } from '../../errors.ts';
import { DELIVERY_STATUSES, RUN_STATUSES } from '../../types.ts';
import type { ApiDepsWith, ZodApp } from '../deps.ts';
import { overviewFigures } from '../overview-figures.ts';
import { schedulerWarning } from '../../schedules/scheduler-watch.ts';
import type { SchedulerHeartbeatStore, StoreLifecycle } from '../../store/store.ts';

type Deps = ApiDepsWith<StoreLifecycle & Pick<SchedulerHeartbeatStore, 'schedulerStatus'>>;

async function refreshGauges(deps: Deps): Promise<void> {
  const stats = await deps.store.stats();
  const figures = overviewFigures(stats, Date.now());
  for (const status of RUN_STATUSES) {
    deps.metrics.runsByStatus.set({ status }, stats.runs_by_status[status] ?? 0);
  }
  deps.metrics.queueDepth.set(figures.queue_depth);
  deps.metrics.oldestQueuedAge.set((figures.oldest_queued_age_ms ?? 0) / 1000);
  deps.metrics.schedulesFailing.set(figures.schedules_failing);
  for (const status of DELIVERY_STATUSES) {
    deps.metrics.deliveriesByStatus.set({ status }, stats.deliveries_by_status[status] ?? 0);
  }
  const warning = schedulerWarning(await deps.store.schedulerStatus());
  deps.metrics.schedulesDueWithoutScheduler.set(warning?.due ?? 0);
}

export function operationRoutes(app: ZodApp, deps: Deps): void {
  const hidden = { hide: true };

  app.get('/healthz', { config: { auth: 'open' }, schema: hidden }, async () => ({ ok: true }));

  app.get('/readyz', { config: { auth: 'open' }, schema: hidden }, async (request) => {
    try {
      await deps.store.ping();
      const migrations = await deps.store.migrationStatus();
      if (migrations.current !== migrations.latest) {
        throw new Error(`schema at ${migrations.current}, code expects ${migrations.latest}`);
      }
      // Still ready (the API works); the warning is for the operator (docs/scale-out.md).
      const warning = schedulerWarning(await deps.store.schedulerStatus());
      if (warning) request.log.warn({ due: warning.due }, `readyz: ${warning.message}`);
      return {
        ok: true,
        store: deps.store.kind,
        schema_version: migrations.current,
        ...(warning && { warnings: [{ code: 'NO_SCHEDULER_RUNNING', ...warning }] }),
      };
    } catch (error) {
      request.log.warn({ err: error }, 'readiness check failed');
      throw new KeelError('STORE_UNAVAILABLE', 'the store is unreachable or not migrated');
    }
  });

  app.get('/metrics', { config: { auth: 'metrics' }, schema: hidden }, async (_request, reply) => {
    await refreshGauges(deps);
    const text = await deps.metrics.registry.metrics();
    return reply.type(deps.metrics.registry.contentType).send(text);
  });

  app.get('/openapi.json', { config: { auth: 'open' }, schema: hidden }, async () => app.swagger());
}
