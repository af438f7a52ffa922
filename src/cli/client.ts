// The HTTP client of the CLI's client commands: JSON requests with the bearer token,
// keel's error shape turned into ApiError (code + message), and the run event stream.

import type { ClientConfig } from './client-config.ts';
import type { SseEvent } from './sse-reader.ts';
import { readSse } from './sse-reader.ts';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** A run event as the events route sends it (persisted: seq/ts; live: no seq). */
export interface StreamEvent {
  seq?: number;
  ts?: string;
  type: string;
  // The CLI prints these loosely; the server's types are the contract.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  data: any;
}

export interface KeelClient {
  readonly config: ClientConfig;
  /** `/v1/tenants/<tenant>` + path, percent-encoded by the caller where needed. */
  tenantPath(path: string): string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  request<T = any>(method: string, path: string, body?: unknown, contentType?: string): Promise<T>;
  /** A body as bytes (artifacts): GET returns them, PUT sends them. */
  bytes(
    method: 'GET' | 'PUT',
    path: string,
    body?: Uint8Array,
    contentType?: string,
  ): Promise<Uint8Array>;
  /** The run's events until the terminal one (or the signal aborts). */
  events(
    runId: string,
    options?: { lastEventId?: number; signal?: AbortSignal },
  ): AsyncGenerator<StreamEvent>;
}

async function failure(response: Response): Promise<ApiError> {
  const text = await response.text();
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string } };
    if (body.error?.code)
      return new ApiError(response.status, body.error.code, body.error.message ?? '');
  } catch {
    // not keel's error shape
  }
  return new ApiError(
    response.status,
    `HTTP_${response.status}`,
    text.slice(0, 200) || response.statusText,
  );
}

export function createClient(config: ClientConfig): KeelClient {
  const authHeaders = (): Record<string, string> =>
    config.token ? { authorization: `Bearer ${config.token}` } : {};

  async function send(method: string, path: string, init: RequestInit = {}): Promise<Response> {
    try {
      return await fetch(`${config.url}${path}`, {
        method,
        ...init,
        headers: { ...authHeaders(), ...(init.headers as Record<string, string> | undefined) },
      });
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      throw new ApiError(
        0,
        'UNREACHABLE',
        `cannot reach keel at ${config.url}${cause ? ` (${cause})` : ''}`,
      );
    }
  }

  return {
    config,
    tenantPath(path) {
      return `/v1/tenants/${encodeURIComponent(config.tenant)}${path}`;
    },
    async request(method, path, body, contentType = 'application/json') {
      const response = await send(method, path, {
        ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
        // Named even without a body: keel refuses a state-changing request without one
        // (its guard against cross-site requests, docs/threat-model.md).
        ...(method !== 'GET' && { headers: { 'content-type': contentType } }),
      });
      if (!response.ok) throw await failure(response);
      const text = await response.text();
      return text ? JSON.parse(text) : null;
    },
    async bytes(method, path, body, contentType = 'application/octet-stream') {
      const response = await send(method, path, {
        ...(body !== undefined && { body }),
        ...(method !== 'GET' && { headers: { 'content-type': contentType } }),
      });
      if (!response.ok) throw await failure(response);
      return new Uint8Array(await response.arrayBuffer());
    },
    async *events(runId, options = {}) {
      const headers: Record<string, string> = { accept: 'text/event-stream' };
      if (options.lastEventId !== undefined) headers['last-event-id'] = String(options.lastEventId);
      const response = await send(
        'GET',
        this.tenantPath(`/runs/${encodeURIComponent(runId)}/events`),
        {
          headers,
          ...(options.signal && { signal: options.signal }),
        },
      );
      if (!response.ok) throw await failure(response);
      if (!response.body) return;
      for await (const message of readSse(response.body) as AsyncGenerator<SseEvent>) {
        yield JSON.parse(message.data) as StreamEvent;
      }
    },
  };
}
