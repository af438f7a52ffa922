// Builds the tenant-scoped ports a tool call receives (docs/reliability.md, "The
// loop's contract"): narrow views of the store bound to the calling run's tenant, agent
// and scope. Tools never see the store itself. Each capability adds its port here.

import type { MemoryPortDeps } from '../memory/tool-port.ts';
import { createMemoryPort } from '../memory/tool-port.ts';
import { createSchedulePort } from '../schedules/tool-port.ts';
import type { ArtifactStore, ScheduleStore } from '../store/store.ts';
import type { ArtifactPort } from '../tools/builtin/artifact-port.ts';
import type { WebPort } from '../tools/builtin/web-port.ts';
import type { ToolPorts } from '../tools/tool.ts';

export interface PortScope {
  tenant: string;
  agent: string;
  scope: string;
}

/** The parts of the store the tool ports bind to a run's scope. */
export type ToolPortStore = ArtifactStore & ScheduleStore;

interface ToolPortDeps {
  store: ToolPortStore;
  now?: () => number;
  /** The process's public-web client (main.ts builds it from `[web]`); absent = no web tools. */
  web?: WebPort;
  /** Memory service + maintainer scans (main.ts); absent = the memory tools answer unavailable. */
  memory?: MemoryPortDeps;
  /** tenant_limits.schedules for schedule_put (null/absent: no quota). */
  maxSchedules?: number | null;
  /** tenant_limits.artifact_bytes for artifact_write (null/absent: no quota). */
  maxArtifactBytes?: number | null;
}

function artifactPortFor(
  store: ArtifactStore,
  tenant: string,
  maxBytes: number | null,
): ArtifactPort {
  return {
    read: (path) => store.getArtifact(tenant, path),
    write: (path, body, contentType, metadata) =>
      store.putArtifact(tenant, path, {
        body,
        content_type: contentType,
        metadata,
        max_bytes: maxBytes,
      }),
    list: (prefix, limit, cursor) => store.listArtifacts(tenant, prefix, limit, cursor),
  };
}

export function createToolPorts(deps: ToolPortDeps, scope: PortScope): ToolPorts {
  const now = deps.now ?? Date.now;
  return {
    now: () => new Date(now()),
    artifacts: artifactPortFor(deps.store, scope.tenant, deps.maxArtifactBytes ?? null),
    schedules: createSchedulePort(deps.store, scope, now, deps.maxSchedules ?? null),
    ...(deps.web ? { web: deps.web } : {}),
    ...(deps.memory ? { memory: createMemoryPort(deps.memory, scope.tenant) } : {}),
  };
}
