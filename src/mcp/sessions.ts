// Long-lived MCP sessions of this process, one per (tenant, server): started on first
// use, shared by the tenant's runs, closed after `idle_ms` without a call, restarted with
// backoff when the server dies. Each tenant gets its own process of a declared server.
// On PostgreSQL with several workers, each worker process holds its own sessions.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../logger.ts';
import type { ConnectDeps, OpenedClient } from './connect.ts';
import { openClient, withTail } from './connect.ts';
import type { McpTransportSpec } from './server-spec.ts';

/** Restart delays after consecutive deaths: 0, 250 ms, 500 ms … at most 30 s. */
export function restartDelayMs(deaths: number): number {
  return deaths <= 1 ? 0 : Math.min(30_000, 250 * 2 ** (deaths - 2));
}
/** How long starting a server (spawn + initialize) may take. */
const START_TIMEOUT_MS = 30_000;
/** How much later than keel's deadline the SDK's own request timer fires. */
const SDK_TIMEOUT_MARGIN_MS = 5_000;
/** A session that lived this long resets the death count. */
const STABLE_MS = 60_000;

export interface SessionKey {
  tenant: string;
  server: string;
  /** The server's updated_at: a changed server gets a new session. */
  version: string;
  transport: McpTransportSpec;
}

/** Why a call failed, as the tool sees it. */
export class McpCallError extends Error {
  constructor(
    readonly kind: 'exited' | 'protocol',
    message: string,
  ) {
    super(message);
    this.name = 'McpCallError';
  }
}

interface Session {
  version: string;
  opened: Promise<OpenedClient>;
  client: Client | null;
  closed: boolean;
  startedAt: number;
  lastError: string | null;
  idleTimer: NodeJS.Timeout | null;
  inFlight: number;
  tail: () => string;
}

export interface McpSessions {
  call(
    key: SessionKey,
    tool: string,
    args: Record<string, unknown>,
    options: { signal: AbortSignal; timeoutMs: number; idempotencyKey: string },
  ): Promise<CallToolResult>;
  /** The pid of a running stdio session (tests kill it). */
  pid(tenant: string, server: string): number | null;
  close(tenant: string, server: string): Promise<void>;
  closeAll(): Promise<void>;
}

export function createMcpSessions(
  deps: ConnectDeps & { logger: Logger; now?: () => number },
): McpSessions {
  const sessions = new Map<string, Session>();
  const deaths = new Map<string, number>();
  const opened = new Map<string, OpenedClient>();
  const now = deps.now ?? Date.now;
  const idOf = (tenant: string, server: string) => `${tenant}\u0000${server}`;

  const drop = (id: string, session: Session) => {
    if (sessions.get(id) === session) sessions.delete(id);
    if (session.idleTimer) clearTimeout(session.idleTimer);
    session.closed = true;
  };

  const closeSession = async (id: string, session: Session) => {
    drop(id, session);
    opened.delete(id);
    await session.client?.close().catch(() => undefined);
  };

  const armIdle = (id: string, session: Session) => {
    if (session.idleTimer) clearTimeout(session.idleTimer);
    session.idleTimer = setTimeout(() => {
      if (session.inFlight === 0) void closeSession(id, session);
    }, deps.settings.idle_ms);
    session.idleTimer.unref();
  };

  const start = (id: string, key: SessionKey, signal: AbortSignal): Session => {
    const count = deaths.get(id) ?? 0;
    const session: Session = {
      version: key.version,
      client: null,
      closed: false,
      startedAt: now(),
      lastError: null,
      idleTimer: null,
      inFlight: 0,
      tail: () => '',
      opened: Promise.resolve(null as unknown as OpenedClient),
    };
    session.opened = (async () => {
      const delay = restartDelayMs(count);
      if (delay > 0) await abortableDelay(delay, signal);
      // The session outlives the call that started it: its start is bounded by its own
      // timeout, not by that call's signal (the call itself stops waiting on its own).
      const client = await openClient(
        deps,
        key.tenant,
        key.transport,
        AbortSignal.timeout(START_TIMEOUT_MS),
      );
      session.client = client.client;
      session.tail = client.stderrTail;
      opened.set(id, client);
      client.client.onerror = (error) => {
        session.lastError = client.scrub(error.message);
      };
      client.client.onclose = () => {
        if (session.closed) return;
        // Died (not closed by us): the next call restarts it, after the backoff.
        const lived = now() - session.startedAt;
        deaths.set(id, lived > STABLE_MS ? 1 : (deaths.get(id) ?? 0) + 1);
        deps.logger.warn(
          { tenant: key.tenant, mcp_server: key.server, error: session.lastError },
          'MCP server session ended',
        );
        drop(id, session);
        opened.delete(id);
      };
      return client;
    })();
    session.opened.catch(() => {
      deaths.set(id, (deaths.get(id) ?? 0) + 1);
      drop(id, session);
    });
    sessions.set(id, session);
    return session;
  };

  return {
    async call(key, tool, args, options) {
      const id = idOf(key.tenant, key.server);
      let session = sessions.get(id);
      if (session && session.version !== key.version) {
        await closeSession(id, session);
        session = undefined;
      }
      session ??= start(id, key, options.signal);
      session.inFlight += 1;
      try {
        let client: OpenedClient;
        try {
          client = await session.opened;
        } catch (error) {
          throw new McpCallError('protocol', `the MCP server did not start: ${message(error)}`);
        }
        // The SDK never removes the abort listener it adds to a request's signal: it
        // gets a signal of its own per call, and the caller's abort is forwarded to it
        // by a listener removed when the call ends (else a run's long-lived signal
        // would keep every finished request alive).
        const cancel = new AbortController();
        const forward = () => cancel.abort(options.signal.reason);
        if (options.signal.aborted) forward();
        else options.signal.addEventListener('abort', forward, { once: true });
        try {
          const result = (await client.client.callTool(
            { name: tool, arguments: args, _meta: { idempotency_key: options.idempotencyKey } },
            undefined,
            // The tool's signal carries keel's deadline (tool-step.ts answers TOOL_TIMEOUT
            // and the SDK sends the cancellation); the SDK's own timer is only a backstop,
            // later, so it never wins the race and turns a timeout into a protocol error.
            {
              signal: cancel.signal,
              timeout: Math.max(1, options.timeoutMs) + SDK_TIMEOUT_MARGIN_MS,
              maxTotalTimeout: Math.max(1, options.timeoutMs) + SDK_TIMEOUT_MARGIN_MS,
            },
          )) as CallToolResult;
          return result.isError ? scrubbedError(result, client.scrub) : result;
        } catch (error) {
          if (options.signal.aborted) throw error;
          if (session.closed || !sessions.has(id)) {
            const why = session.lastError ?? message(error);
            throw new McpCallError(
              'exited',
              client.scrub(
                withTail(`the MCP server ended during the call: ${why}`, client.stderrTail()),
              ),
            );
          }
          throw new McpCallError('protocol', client.scrub(message(error)));
        } finally {
          options.signal.removeEventListener('abort', forward);
        }
      } finally {
        session.inFlight -= 1;
        if (!session.closed) armIdle(id, session);
      }
    },
    pid(tenant, server) {
      return opened.get(idOf(tenant, server))?.pid() ?? null;
    },
    async close(tenant, server) {
      const id = idOf(tenant, server);
      const session = sessions.get(id);
      if (session) await closeSession(id, session);
    },
    async closeAll() {
      await Promise.all([...sessions.entries()].map(([id, session]) => closeSession(id, session)));
    },
  };
}

/**
 * An error result with the secrets this client sends blanked from its text: it becomes
 * the tool's error, the trace and the model's input (a server may echo the request).
 */
function scrubbedError(result: CallToolResult, scrub: (text: string) => string): CallToolResult {
  return {
    ...result,
    content: result.content.map((item) =>
      item.type === 'text' ? { ...item, text: scrub(item.text) } : item,
    ),
  };
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}
