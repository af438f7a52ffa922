// Builds the memory port of one run's tool calls: the memory service bound to the
// run's tenant, and the process's maintainer scan bookkeeping.

import type { MemoryPort } from '../tools/builtin/memory-port.ts';
import type { MaintenanceScans } from './maintenance.ts';
import type { MemoryService } from './service.ts';

export interface MemoryPortDeps {
  service: MemoryService;
  scans: MaintenanceScans;
}

export function createMemoryPort(deps: MemoryPortDeps, tenant: string): MemoryPort {
  const { service, scans } = deps;
  return {
    put: (namespace, id, text) => service.put(tenant, namespace, id, text),
    get: (namespace, id) => service.get(tenant, namespace, id),
    search: (namespace, query, limit, mode) =>
      service.search(tenant, namespace, query, limit, mode),
    list: (namespace, limit, cursor) => service.list(tenant, namespace, limit, cursor),
    delete: (namespace, id) => service.delete(tenant, namespace, id),
    scans: {
      listed: (runId, namespace, cursor, next) => scans.listed(runId, namespace, cursor, next),
      isComplete: (runId, namespace) => scans.isComplete(runId, namespace),
    },
  };
}
