// What the run loop needs from the process (docs/architecture.md, step 5): the journal it
// records to (journal.ts, the only way it writes the run's own state), the store parts it
// reads or writes besides, providers, tools and the knobs the worker passes down. Its own
// file so run-loop.ts holds only the loop.

import type { Failpoints } from '../failpoints.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { ProviderRegistry } from '../providers/provider.ts';
import type { AgentStore, ApprovalStore, RunStore } from '../store/store.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { ToolPorts } from '../tools/tool.ts';
import type { RunJournalPort } from './journal.ts';
import type { LiveEvents } from './live.ts';
import type { BudgetStore } from './budgets.ts';
import type { PriceBook } from './usage-prices.ts';
import type { RetryPolicy } from './model-call.ts';
import type { OutputSchemas } from './output-schema.ts';
import type { TokenCounter } from './token-count.ts';
import type { PortScope, ToolPortStore } from './tool-ports.ts';
import type { RunTracer } from './tracer.ts';

export interface RunLoopDeps {
  /** The run's journal: entries, progress, steers and the finalization, all fenced. */
  journal: RunJournalPort;
  /** What else the loop reads (trace, thread, agent) or writes (approvals, tool ports). */
  store: Pick<RunStore, 'getTrace'> &
    AgentStore &
    ToolPortStore &
    Pick<ApprovalStore, 'requestApproval' | 'listRunApprovals'>;
  providers: ProviderRegistry;
  logger: Logger;
  metrics: Metrics;
  failpoints: Failpoints;
  /** Every tool of this process; each agent sees its visible subset. Default: none. */
  tools?: ToolRegistry;
  /** A tenant's tools (built-ins + its MCP servers', src/mcp/catalog.ts); else `tools`. */
  toolsFor?: (tenant: string) => Promise<ToolRegistry>;
  /** Builds a run's tenant-scoped ports; default createToolPorts({store, now}). */
  toolPorts?: (scope: PortScope) => ToolPorts;
  live?: LiveEvents;
  retry?: RetryPolicy;
  now?: () => number;
  /** Compiled output schemas, shared by the worker's runs; default: one per attempt. */
  outputSchemas?: OutputSchemas;
  /** Crashed attempts after which a run fails RUN_CRASHED (workers.max_attempts). */
  maxAttempts?: number;
  /** Spans of runs (docs/telemetry.md); default: the no-op tracer. */
  tracer?: RunTracer;
  /** Token counts shared by the worker's runs (compaction.ts); default: one per attempt. */
  tokenCounter?: TokenCounter;
  /** Usage ledger reads for budgets (budgets.ts); absent = only max_total_tokens, from figures. */
  usage?: BudgetStore;
  /** Prices per model ([providers.x.prices]); absent = calls cost 0. */
  prices?: PriceBook;
}
