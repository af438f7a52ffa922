// Builds the tenant-scoped ports a tool call receives (spec/tools.md): narrow views of
// the store bound to the calling run's tenant, agent and scope. Tools never see the
// store itself. Each capability adds its port here.

import type { Store } from '../store/store.ts';
import type { ToolPorts } from '../tools/tool.ts';

export interface PortScope {
  tenant: string;
  agent: string;
  scope: string;
}

export interface ToolPortDeps {
  store: Store;
  now?: () => number;
}

export function createToolPorts(deps: ToolPortDeps, _scope: PortScope): ToolPorts {
  const now = deps.now ?? Date.now;
  return {
    now: () => new Date(now()),
  };
}
