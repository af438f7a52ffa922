// What the HTTP edge needs from the composition root. Everything arrives here; the API
// keeps no module-level state, so two instances in one process never share anything.

import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { KeelConfig } from '../config.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { MemoryService } from '../memory/service.ts';
import type { LiveEvents } from '../runtime/live.ts';
import type { Store } from '../store/store.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { ToolsForTenant } from '../mcp/catalog.ts';
import type { McpService } from '../mcp/service.ts';
import type { WasmService } from '../wasm/service.ts';

export interface ApiDeps {
  config: KeelConfig;
  store: Store;
  /** fastify logs through this pino instance; every request line carries `request_id`. */
  logger: Logger;
  /** One registry per keel instance; `/metrics` renders it and adds HTTP counters. */
  metrics: Metrics;
  /** Live-only run events (`model.delta`) for the SSE route; absent → none are sent. */
  live?: LiveEvents;
  /** The process's tools (GET T/tools); absent → no tools are listed. */
  tools?: ToolRegistry;
  /** A tenant's tools (built-ins + its MCP servers' tools) for GET T/tools; else `tools`. */
  toolsFor?: ToolsForTenant;
  /** MCP servers (docs/mcp.md); absent → the T/mcp routes are not served. */
  mcp?: McpService;
  /** WebAssembly tools (docs/wasm-tools.md); absent → the T/wasm-tools routes are not served. */
  wasm?: WasmService;
  /** Memory (embedder chosen in main.ts); absent → the memory routes are not served. */
  memory?: MemoryService;
  /**
   * Provider names an agent's model may name (keel.toml's and test overrides); absent →
   * keel.toml's. `fixture` is always valid.
   */
  providers?: readonly string[];
}

/** ApiDeps with only the part of the store a route file uses (e.g. ApiDepsWith<RunStore>). */
export type ApiDepsWith<S> = Omit<ApiDeps, 'store'> & { store: S };

/** The fastify instance as the route files see it: zod schemas type the handlers. */
export type ZodApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ZodTypeProvider
>;
