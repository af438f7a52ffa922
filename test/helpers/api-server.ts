// Starts a real SQLite store in a temp dir and the HTTP API on 127.0.0.1:<free port>,
// for tests that talk HTTP. Generic on purpose: API, e2e and CLI tests share it.
//
//   const server = await startApiServer();                 // admin token mode
//   const server = await startApiServer({ adminToken: null }); // tokenless (loopback)
//   const res = await server.request('POST', '/v1/tenants', { body: { name: 'demo' } });
//   await server.close();

import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApi } from '../../src/api/app.ts';
import type { KeelConfig } from '../../src/config.ts';
import { loadConfig } from '../../src/config.ts';
import type { Logger } from '../../src/logger.ts';
import type { Metrics } from '../../src/metrics.ts';
import { createMetrics } from '../../src/metrics.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { builtinTools } from '../../src/tools/builtin/index.ts';
import { createToolRegistry } from '../../src/tools/registry.ts';
import type { Store } from '../../src/store/store.ts';

export interface ApiServerOptions {
  /** Admin token; null = tokenless mode. Default: a fresh random token. */
  adminToken?: string | null;
  /** Applied on top of the loaded config (e.g. `{ limits: {...} }`). */
  config?: Partial<KeelConfig>;
  /** Default: a silent pino logger. */
  logger?: Logger;
}

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  /** Parsed JSON when the response is JSON, else the text. */
  body: T;
  text: string;
}

export interface RequestOptions {
  /** JSON-encoded unless it is a string (then sent as is). */
  body?: unknown;
  /** Bearer token; default: the admin token. Pass null to send none. */
  token?: string | null;
  headers?: Record<string, string>;
  /** Default: application/json on a body or a POST/PUT/PATCH; null sends none. */
  contentType?: string | null;
}

export interface ApiServer {
  url: string;
  adminToken: string | null;
  store: Store;
  app: FastifyInstance;
  config: KeelConfig;
  metrics: Metrics;
  dir: string;
  // Tests read response bodies loosely; `any` keeps assertions short and is test-only.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  close(): Promise<void>;
}

export async function startApiServer(options: ApiServerOptions = {}): Promise<ApiServer> {
  const dir = await mkdtemp(join(tmpdir(), 'keel-api-'));
  const adminToken =
    options.adminToken === undefined ? `admin-${crypto.randomUUID()}` : options.adminToken;
  const env: NodeJS.ProcessEnv = adminToken === null ? {} : { KEEL_ADMIN_TOKEN: adminToken };
  const loaded = loadConfig({ data_dir: dir, listen: '127.0.0.1:0' }, env, dir);
  const config: KeelConfig = { ...loaded, ...options.config };
  const store = await openSqliteStore({ path: join(dir, 'keel.db'), durability: 'process' });
  const metrics = createMetrics();
  const logger = options.logger ?? pino({ level: 'silent' });
  const tools = createToolRegistry(builtinTools());
  const app = await buildApi({ config, store, logger, metrics, tools });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  const url = `http://127.0.0.1:${address.port}`;

  async function request<T>(
    method: string,
    path: string,
    requestOptions: RequestOptions = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...requestOptions.headers };
    const token = requestOptions.token === undefined ? adminToken : requestOptions.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (requestOptions.body !== undefined) {
      body =
        typeof requestOptions.body === 'string'
          ? requestOptions.body
          : JSON.stringify(requestOptions.body);
      // Explicit: Node's client frames DELETE/GET bodies only with a content-length.
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    // Like the CLI: a state-changing request names its content type even without a body.
    const contentType =
      requestOptions.contentType === undefined
        ? body !== undefined || ['POST', 'PUT', 'PATCH'].includes(method)
          ? 'application/json'
          : null
        : requestOptions.contentType;
    if (contentType !== null) headers['content-type'] = contentType;
    // node:http rather than fetch: fetch silently replaces a custom Host header.
    const response = await sendRaw(url, method, path, headers, body);
    const isJson = (response.headers.get('content-type') ?? '').includes('application/json');
    return {
      status: response.status,
      headers: response.headers,
      body: (isJson && response.text ? JSON.parse(response.text) : response.text) as T,
      text: response.text,
    };
  }

  return {
    url,
    adminToken,
    store,
    app,
    config,
    metrics,
    dir,
    request,
    async close() {
      await app.close();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function sendRaw(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<{ status: number; headers: Headers; text: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${base}${path}`, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          if (value !== undefined) {
            responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
          }
        }
        resolve({
          status: response.statusCode ?? 0,
          headers: responseHeaders,
          text: Buffer.concat(chunks).toString('utf8'),
        });
      });
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** Creates a tenant, an agent (fixture model) and a tenant token; returns the token. */
export async function seedTenant(
  server: ApiServer,
  tenant: string,
  agent = 'assistant',
): Promise<{ token: string; tokenId: string }> {
  const created = await server.request('POST', '/v1/tenants', { body: { name: tenant } });
  if (created.status >= 300) throw new Error(`seed tenant: ${created.text}`);
  const put = await server.request('PUT', `/v1/tenants/${tenant}/agents/${agent}`, {
    body: { model: 'fixture/echo' },
  });
  if (put.status >= 300) throw new Error(`seed agent: ${put.text}`);
  if (server.adminToken === null) return { token: '', tokenId: '' };
  const token = await server.request('POST', `/v1/tenants/${tenant}/tokens`, {
    body: { name: 'seed' },
  });
  if (token.status !== 201) throw new Error(`seed token: ${token.text}`);
  return { token: token.body.token as string, tokenId: token.body.id as string };
}

/**
 * A comparable picture of what the store holds (counts, tenants, agents, tokens, runs):
 * equal snapshots before and after a rejected request prove it wrote nothing.
 */
export async function storeSnapshot(store: Store): Promise<string> {
  const tenants = await store.listTenants();
  const perTenant = [];
  for (const tenant of tenants) {
    const runs = await store.listRuns(tenant.name, {}, 200);
    perTenant.push({
      tenant,
      agents: (await store.listAgents(tenant.name, 200)).items,
      tokens: await store.listTokens(tenant.name),
      runs: runs.items.map((run) => [run.run_id, run.status, run.attempt]),
    });
  }
  return JSON.stringify({ stats: await store.stats(), perTenant });
}
