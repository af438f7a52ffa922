// The console's only way to the server: fetch with the bearer token from
// sessionStorage (never a URL, never a cookie), keel's error shape turned into
// ApiError, and a fetch-based SSE reader, since EventSource cannot send a header.

import { createParser } from './vendor/eventsource-parser.mjs';

const TOKEN_KEY = 'keel.token';
const TENANT_KEY = 'keel.tenant';

export const session = {
  token: () => sessionStorage.getItem(TOKEN_KEY),
  tenant: () => sessionStorage.getItem(TENANT_KEY),
  /** @param {string | null} token */
  setToken(token) {
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  },
  /** @param {string | null} tenant */
  setTenant(tenant) {
    if (tenant) sessionStorage.setItem(TENANT_KEY, tenant);
    else sessionStorage.removeItem(TENANT_KEY);
  },
};

/** keel's `{error: {code, message, request_id}}` as a thrown value. */
export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {{code?: string, message?: string, request_id?: string} | undefined} error
   */
  constructor(status, error) {
    super(error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = error?.code ?? `HTTP_${status}`;
    this.requestId = error?.request_id ?? null;
  }
}

/** @param {Record<string, string>} extra */
function headers(extra = {}) {
  const token = session.token();
  return { ...(token ? { authorization: `Bearer ${token}` } : {}), ...extra };
}

/**
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @param {{signal?: AbortSignal}} [options]
 */
export async function request(method, path, body, options = {}) {
  const sendsBody = method === 'POST' || method === 'PUT' || method === 'PATCH';
  const response = await fetch(path, {
    method,
    cache: 'no-store',
    signal: options.signal,
    // keel wants application/json on every state change, even one without a body.
    headers: headers(sendsBody ? { 'content-type': 'application/json' } : {}),
    ...(sendsBody && { body: JSON.stringify(body ?? {}) }),
  });
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!response.ok) throw new ApiError(response.status, json?.error);
  return json;
}

export const api = {
  /** @param {string} path @param {{signal?: AbortSignal}} [options] */
  get: (path, options) => request('GET', path, undefined, options),
  /** @param {string} path @param {unknown} [body] */
  post: (path, body) => request('POST', path, body),
  /** @param {string} path @param {unknown} body */
  put: (path, body) => request('PUT', path, body),
  /** @param {string} path */
  del: (path) => request('DELETE', path),
  /** An artifact's bytes with the token, as a Blob the page can offer for download. */
  async blob(/** @type {string} */ path) {
    const response = await fetch(path, { headers: headers(), cache: 'no-store' });
    if (!response.ok) throw new ApiError(response.status, undefined);
    return response.blob();
  },
};

/** `/v1/tenants/<tenant><rest>` */
export function tenantPath(/** @type {string} */ tenant, rest = '') {
  return `/v1/tenants/${encodeURIComponent(tenant)}${rest}`;
}

/** `?a=1&b=2`, leaving out empty values; '' when nothing is left. */
export function query(/** @type {Record<string, unknown>} */ params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

const RECONNECT_MS = 2000;

/**
 * Follows an SSE route: reconnects with Last-Event-ID after a dropped connection, and
 * stops for good on a 4xx, when `isLast(event)` was seen, or when the returned
 * function is called. `T`: what each message's JSON data is (the caller's word for it).
 * @template [T=any]
 * @param {string} path
 * @param {{
 *   onEvent: (type: string, data: T, id: string | undefined) => void,
 *   onState?: (state: 'live' | 'reconnecting' | 'ended' | 'error', error?: unknown) => void,
 *   isLast?: (type: string) => boolean,
 *   lastEventId?: string,
 * }} handlers
 */
export function follow(path, { onEvent, onState = () => {}, isLast = () => false, lastEventId }) {
  const controller = new AbortController();
  let lastId = lastEventId;
  let finished = false;

  async function connectOnce() {
    const response = await fetch(path, {
      cache: 'no-store',
      signal: controller.signal,
      headers: headers({
        accept: 'text/event-stream',
        ...(lastId !== undefined && { 'last-event-id': lastId }),
      }),
    });
    if (!response.ok || !response.body) {
      const json = await response.json().catch(() => null);
      throw new ApiError(response.status, json?.error);
    }
    onState('live');
    const parser = createParser({
      onEvent(message) {
        if (message.id) lastId = message.id;
        let data;
        try {
          data = JSON.parse(message.data);
        } catch {
          return;
        }
        const type = message.event ?? 'message';
        onEvent(type, data, message.id);
        if (isLast(type)) finished = true;
      },
    });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      parser.feed(value);
    }
  }

  (async () => {
    while (!controller.signal.aborted) {
      try {
        await connectOnce();
        if (finished) return onState('ended');
        onState('reconnecting');
      } catch (error) {
        if (controller.signal.aborted) return;
        const permanent = error instanceof ApiError && error.status < 500 && error.status !== 429;
        onState(permanent ? 'error' : 'reconnecting', error);
        if (permanent) return;
      }
      await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
    }
  })();
  return () => controller.abort();
}
