// keel/client: a typed client of the HTTP API, built on openapi-fetch and the types
// generated from docs/openapi.json (./schema.ts). `api` is the raw typed client (every
// route); the resource helpers below return the JSON body or throw KeelApiError.
//
//   const keel = createKeelClient({ baseUrl: 'http://127.0.0.1:8080', token });
//   const { run_id } = await keel.turns.submit('demo', { agent, scope, payload: { text } });
//   for await (const event of keel.turns.events('demo', run_id)) console.log(event.type);

import createClient from 'openapi-fetch';
import type { components, paths } from './schema.ts';
import type { EventStreamOptions, RunEvent } from './events.ts';
import { runEvents } from './events.ts';

export type { components, paths } from './schema.ts';
export type { EventStreamOptions, RunEvent } from './events.ts';

export interface KeelClientOptions {
  /** e.g. http://127.0.0.1:8080 */
  baseUrl: string;
  /** The admin token or a tenant token; absent in tokenless (loopback) mode. */
  token?: string;
  /** A fetch to use instead of the global one (tests record with it). */
  fetch?: typeof fetch;
}

/** keel's error shape as an exception: the catalogue code, the status and the request id. */
export class KeelApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | null,
  ) {
    super(message);
    this.name = 'KeelApiError';
  }
}

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type Op<P extends keyof paths, M extends keyof paths[P]> = NonNullable<paths[P][M]>;
/** The JSON request body of a route. */
export type RequestBody<P extends keyof paths, M extends keyof paths[P]> =
  Op<P, M> extends { requestBody?: infer R } ? Json<NonNullable<R>> : never;
/** The query parameters of a route. */
export type Query<P extends keyof paths, M extends keyof paths[P]> =
  Op<P, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

export type Run = components['schemas']['Run'];
export type Agent = components['schemas']['Agent'];
export type Delivery = components['schemas']['Delivery'];
export type ClaimedDelivery = components['schemas']['ClaimedDelivery'];

async function errorOf(response: Response, body?: unknown): Promise<KeelApiError> {
  let parsed = body;
  if (parsed === undefined) {
    const text = await response.text().catch(() => '');
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = { error: { code: `HTTP_${response.status}`, message: text.slice(0, 200) } };
    }
  }
  const error = (parsed as { error?: { code?: string; message?: string } } | null)?.error;
  // Not keel's error shape (a proxy's page): its first characters say more than the status.
  const text = typeof parsed === 'string' ? parsed.slice(0, 200) : '';
  return new KeelApiError(
    response.status,
    error?.code ?? `HTTP_${response.status}`,
    error?.message ?? (text || response.statusText),
    response.headers.get('x-request-id'),
  );
}

/** The body of a 2xx answer, or KeelApiError. */
async function ok<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<NonNullable<T>> {
  const { data, error, response } = await call;
  if (!response.ok || error !== undefined) throw await errorOf(response, error);
  return data as NonNullable<T>;
}

const T = '/v1/tenants/{tenant}' as const;

export function createKeelClient(options: KeelClientOptions) {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const headers: Record<string, string> = options.token
    ? { authorization: `Bearer ${options.token}` }
    : {};
  const doFetch = options.fetch ?? globalThis.fetch;
  const api = createClient<paths>({ baseUrl, headers, fetch: doFetch });
  // keel's cross-site guard wants application/json on every POST, PUT and PATCH, even
  // without a body (docs/http-api.md); openapi-fetch sends none when there is no body.
  api.use({
    onRequest({ request }) {
      if (
        ['POST', 'PUT', 'PATCH'].includes(request.method) &&
        !request.headers.has('content-type')
      ) {
        request.headers.set('content-type', 'application/json');
      }
      return request;
    },
  });
  const raw = (path: string, init: RequestInit = {}) =>
    doFetch(`${baseUrl}${path}`, {
      ...init,
      headers: { ...headers, ...(init.headers as Record<string, string> | undefined) },
    });
  const enc = encodeURIComponent;
  const tp = (tenant: string) => ({ tenant });

  const runs = {
    list: (tenant: string, query: Query<`${typeof T}/runs`, 'get'> = {}) =>
      ok(api.GET(`${T}/runs`, { params: { path: tp(tenant), query } })),
    get: (tenant: string, id: string) =>
      ok(api.GET(`${T}/runs/{id}`, { params: { path: { tenant, id } } })),
    cancel: (
      tenant: string,
      id: string,
      body: RequestBody<`${typeof T}/runs/{id}/cancel`, 'post'> = {},
    ) => ok(api.POST(`${T}/runs/{id}/cancel`, { params: { path: { tenant, id } }, body })),
    /** One page of the run's persisted events (`after` a seq, at most 1000). */
    trace: (tenant: string, id: string, query: Query<`${typeof T}/runs/{id}/trace`, 'get'> = {}) =>
      ok(api.GET(`${T}/runs/{id}/trace`, { params: { path: { tenant, id }, query } })),
    /** One page of the run's entries (`after` a seq); `next_after` is the next page's. */
    entries: (
      tenant: string,
      id: string,
      query: Query<`${typeof T}/runs/{id}/entries`, 'get'> = {},
    ) => ok(api.GET(`${T}/runs/{id}/entries`, { params: { path: { tenant, id }, query } })),
    fork: (tenant: string, id: string, body: RequestBody<`${typeof T}/runs/{id}/fork`, 'post'>) =>
      ok(api.POST(`${T}/runs/{id}/fork`, { params: { path: { tenant, id } }, body })),
  };

  return {
    /** The raw typed client: every route, `{ data, error, response }`. */
    api,
    tenants: {
      list: () => ok(api.GET('/v1/tenants')),
      create: (body: RequestBody<'/v1/tenants', 'post'>) => ok(api.POST('/v1/tenants', { body })),
      get: (tenant: string) => ok(api.GET(T, { params: { path: tp(tenant) } })),
      update: (tenant: string, body: RequestBody<typeof T, 'patch'>) =>
        ok(api.PATCH(T, { params: { path: tp(tenant) }, body })),
      delete: (tenant: string) => ok(api.DELETE(T, { params: { path: tp(tenant) } })),
      mintToken: (tenant: string, body: RequestBody<`${typeof T}/tokens`, 'post'>) =>
        ok(api.POST(`${T}/tokens`, { params: { path: tp(tenant) }, body })),
      overview: (tenant: string) => ok(api.GET(`${T}/overview`, { params: { path: tp(tenant) } })),
    },
    agents: {
      /** One page by name; follow `next_cursor` for the rest. */
      list: (tenant: string, query: Query<`${typeof T}/agents`, 'get'> = {}) =>
        ok(api.GET(`${T}/agents`, { params: { path: tp(tenant), query } })),
      put: (
        tenant: string,
        agent: string,
        body: RequestBody<`${typeof T}/agents/{agent}`, 'put'>,
      ) => ok(api.PUT(`${T}/agents/{agent}`, { params: { path: { tenant, agent } }, body })),
      /** The definition as a document the server parses: TOML or JSON text. */
      putText: (tenant: string, agent: string, text: string, contentType: string) =>
        ok(
          api.PUT(`${T}/agents/{agent}`, {
            params: { path: { tenant, agent } },
            body: text as never,
            bodySerializer: (body: unknown) => body as string,
            headers: { 'content-type': contentType },
          }),
        ),
      get: (tenant: string, agent: string) =>
        ok(api.GET(`${T}/agents/{agent}`, { params: { path: { tenant, agent } } })),
      delete: (tenant: string, agent: string) =>
        ok(api.DELETE(`${T}/agents/{agent}`, { params: { path: { tenant, agent } } })),
    },
    turns: {
      submit: (tenant: string, body: RequestBody<`${typeof T}/turns`, 'post'>) =>
        ok(api.POST(`${T}/turns`, { params: { path: tp(tenant) }, body })),
      /** Long-polls until the run ends or timeout_ms passes (`timed_out`). */
      wait: (tenant: string, id: string, timeoutMs?: number) =>
        ok(
          api.GET(`${T}/runs/{id}/wait`, {
            params: {
              path: { tenant, id },
              query: timeoutMs === undefined ? {} : { timeout_ms: String(timeoutMs) },
            },
          }),
        ),
      /** The run's events until the terminal one; resumes with Last-Event-ID on a drop. */
      events: (tenant: string, id: string, streamOptions: EventStreamOptions = {}) =>
        runEvents(
          {
            open: async (lastEventId, signal) => {
              const response = await raw(`/v1/tenants/${enc(tenant)}/runs/${enc(id)}/events`, {
                headers: {
                  accept: 'text/event-stream',
                  ...(lastEventId !== undefined && { 'last-event-id': String(lastEventId) }),
                },
                ...(signal && { signal }),
              });
              if (!response.ok) throw await errorOf(response);
              return response;
            },
            ended: async () =>
              ['succeeded', 'failed', 'cancelled'].includes(
                (await runs.get(tenant, id)).run.status,
              ),
          },
          streamOptions,
        ) as AsyncGenerator<RunEvent>,
    },
    runs,
    threads: {
      list: (
        tenant: string,
        agent: string,
        query: Query<`${typeof T}/threads/{agent}`, 'get'> = {},
      ) => ok(api.GET(`${T}/threads/{agent}`, { params: { path: { tenant, agent }, query } })),
      /** The thread with one page of its messages; follow `next_cursor` for the rest. */
      get: (
        tenant: string,
        agent: string,
        scope: string,
        query: Query<`${typeof T}/threads/{agent}/{scope}`, 'get'> = {},
      ) =>
        ok(
          api.GET(`${T}/threads/{agent}/{scope}`, {
            params: { path: { tenant, agent, scope }, query },
          }),
        ),
      delete: (tenant: string, agent: string, scope: string) =>
        ok(
          api.DELETE(`${T}/threads/{agent}/{scope}`, {
            params: { path: { tenant, agent, scope } },
          }),
        ),
    },
    memory: {
      list: (
        tenant: string,
        namespace: string,
        query: Query<`${typeof T}/memory/{namespace}`, 'get'> = {},
      ) =>
        ok(api.GET(`${T}/memory/{namespace}`, { params: { path: { tenant, namespace }, query } })),
      search: (
        tenant: string,
        namespace: string,
        query: Query<`${typeof T}/memory/{namespace}/search`, 'get'>,
      ) =>
        ok(
          api.GET(`${T}/memory/{namespace}/search`, {
            params: { path: { tenant, namespace }, query },
          }),
        ),
      get: (tenant: string, namespace: string, id: string) =>
        ok(
          api.GET(`${T}/memory/{namespace}/{id}`, { params: { path: { tenant, namespace, id } } }),
        ),
      put: (
        tenant: string,
        namespace: string,
        id: string,
        body: RequestBody<`${typeof T}/memory/{namespace}/{id}`, 'put'>,
      ) =>
        ok(
          api.PUT(`${T}/memory/{namespace}/{id}`, {
            params: { path: { tenant, namespace, id } },
            body,
          }),
        ),
      delete: (tenant: string, namespace: string, id: string) =>
        ok(
          api.DELETE(`${T}/memory/{namespace}/{id}`, {
            params: { path: { tenant, namespace, id } },
          }),
        ),
    },
    artifacts: {
      list: (tenant: string, query: Query<`${typeof T}/artifacts`, 'get'> = {}) =>
        ok(api.GET(`${T}/artifacts`, { params: { path: tp(tenant), query } })),
      /** The bytes and content type of an artifact. */
      get: async (tenant: string, path: string) => {
        const response = await raw(`/v1/tenants/${enc(tenant)}/artifacts/${encodePath(path)}`);
        if (!response.ok) throw await errorOf(response);
        return {
          body: new Uint8Array(await response.arrayBuffer()),
          contentType: response.headers.get('content-type') ?? 'application/octet-stream',
        };
      },
      put: async (tenant: string, path: string, body: Uint8Array | string, contentType: string) => {
        const response = await raw(`/v1/tenants/${enc(tenant)}/artifacts/${encodePath(path)}`, {
          method: 'PUT',
          body,
          headers: { 'content-type': contentType },
        });
        if (!response.ok) throw await errorOf(response);
        return (await response.json()) as { artifact: components['schemas']['Artifact'] };
      },
      delete: (tenant: string, path: string) =>
        ok(api.DELETE(`${T}/artifacts/{path}`, { params: { path: { tenant, path } } })),
    },
    schedules: {
      list: (tenant: string, query: Query<`${typeof T}/schedules`, 'get'> = {}) =>
        ok(api.GET(`${T}/schedules`, { params: { path: tp(tenant), query } })),
      put: (
        tenant: string,
        name: string,
        body: RequestBody<`${typeof T}/schedules/{name}`, 'put'>,
      ) => ok(api.PUT(`${T}/schedules/{name}`, { params: { path: { tenant, name } }, body })),
      /** The schedule as JSON text, sent as is (the CLI converts TOML files first). */
      putText: (tenant: string, name: string, text: string) =>
        ok(
          api.PUT(`${T}/schedules/{name}`, {
            params: { path: { tenant, name } },
            body: text as never,
            bodySerializer: (body: unknown) => body as string,
            headers: { 'content-type': 'application/json' },
          }),
        ),
      get: (tenant: string, name: string) =>
        ok(api.GET(`${T}/schedules/{name}`, { params: { path: { tenant, name } } })),
      delete: (tenant: string, name: string) =>
        ok(api.DELETE(`${T}/schedules/{name}`, { params: { path: { tenant, name } } })),
      trigger: (tenant: string, name: string) =>
        ok(
          api.POST(`${T}/schedules/{name}/trigger`, {
            params: { path: { tenant, name } },
            body: {},
          }),
        ),
    },
    deliveries: {
      list: (tenant: string, query: Query<`${typeof T}/deliveries`, 'get'> = {}) =>
        ok(api.GET(`${T}/deliveries`, { params: { path: tp(tenant), query } })),
      claim: (tenant: string, body: RequestBody<`${typeof T}/deliveries/claim`, 'post'> = {}) =>
        ok(api.POST(`${T}/deliveries/claim`, { params: { path: tp(tenant) }, body })),
      ack: (
        tenant: string,
        id: string,
        body: RequestBody<`${typeof T}/deliveries/{id}/ack`, 'post'>,
      ) => ok(api.POST(`${T}/deliveries/{id}/ack`, { params: { path: { tenant, id } }, body })),
      retry: (tenant: string, id: string) =>
        ok(api.POST(`${T}/deliveries/{id}/retry`, { params: { path: { tenant, id } }, body: {} })),
    },
    approvals: {
      list: (tenant: string, query: Query<`${typeof T}/approvals`, 'get'> = {}) =>
        ok(api.GET(`${T}/approvals`, { params: { path: tp(tenant), query } })),
      forRun: (tenant: string, id: string) =>
        ok(api.GET(`${T}/runs/{id}/approvals`, { params: { path: { tenant, id } } })),
      decide: (
        tenant: string,
        id: string,
        callId: string,
        body: RequestBody<`${typeof T}/runs/{id}/approvals/{call_id}`, 'post'>,
      ) =>
        ok(
          api.POST(`${T}/runs/{id}/approvals/{call_id}`, {
            params: { path: { tenant, id, call_id: callId } },
            body,
          }),
        ),
    },
    secrets: {
      /** One page by name; follow `next_cursor` for the rest. */
      list: (tenant: string, query: Query<`${typeof T}/secrets`, 'get'> = {}) =>
        ok(api.GET(`${T}/secrets`, { params: { path: tp(tenant), query } })),
      put: (tenant: string, name: string, body: RequestBody<`${typeof T}/secrets/{name}`, 'put'>) =>
        ok(api.PUT(`${T}/secrets/{name}`, { params: { path: { tenant, name } }, body })),
      delete: (tenant: string, name: string) =>
        ok(api.DELETE(`${T}/secrets/{name}`, { params: { path: { tenant, name } } })),
    },
    mcp: {
      /** One page by name; follow `next_cursor` for the rest. */
      list: (tenant: string, query: Query<`${typeof T}/mcp`, 'get'> = {}) =>
        ok(api.GET(`${T}/mcp`, { params: { path: tp(tenant), query } })),
      get: (tenant: string, name: string) =>
        ok(api.GET(`${T}/mcp/{name}`, { params: { path: { tenant, name } } })),
      put: (tenant: string, name: string, body: RequestBody<`${typeof T}/mcp/{name}`, 'put'>) =>
        ok(api.PUT(`${T}/mcp/{name}`, { params: { path: { tenant, name } }, body })),
      delete: (tenant: string, name: string) =>
        ok(api.DELETE(`${T}/mcp/{name}`, { params: { path: { tenant, name } } })),
    },
    wasmTools: {
      /** One page by name; follow `next_cursor` for the rest. */
      list: (tenant: string, query: Query<`${typeof T}/wasm-tools`, 'get'> = {}) =>
        ok(api.GET(`${T}/wasm-tools`, { params: { path: tp(tenant), query } })),
      get: (tenant: string, name: string) =>
        ok(api.GET(`${T}/wasm-tools/{name}`, { params: { path: { tenant, name } } })),
      put: (
        tenant: string,
        name: string,
        body: RequestBody<`${typeof T}/wasm-tools/{name}`, 'put'>,
      ) => ok(api.PUT(`${T}/wasm-tools/{name}`, { params: { path: { tenant, name } }, body })),
      delete: (tenant: string, name: string) =>
        ok(api.DELETE(`${T}/wasm-tools/{name}`, { params: { path: { tenant, name } } })),
    },
  };
}

export type KeelClient = ReturnType<typeof createKeelClient>;

/** An artifact path keeps its slashes; each segment is percent-encoded. */
function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}
