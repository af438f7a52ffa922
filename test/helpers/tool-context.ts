// The context a tool sees when a test calls it directly (no loop): one call of a run,
// its key `<run_id>:<call_id>`, ten seconds to finish, and the ports built from the
// given store and services the way the runtime builds them.

import { createToolPorts } from '../../src/runtime/tool-ports.ts';
import type { ToolContext } from '../../src/tools/tool.ts';

export interface ToolCallAt {
  tenant: string;
  agent?: string;
  scope?: string;
  runId?: string;
  callId?: string;
}

export function toolContext(
  deps: Parameters<typeof createToolPorts>[0],
  { tenant, agent = 'assistant', scope = 's', runId = 'run-1', callId = 'c1' }: ToolCallAt,
): ToolContext {
  return {
    tenant,
    agent,
    scope,
    run_id: runId,
    call_id: callId,
    idempotency_key: `${runId}:${callId}`,
    deadline: Date.now() + 10_000,
    signal: new AbortController().signal,
    ports: createToolPorts(deps, { tenant, agent, scope }),
  };
}
