// Bearer-token rules of docs/http-api.md: the admin token reaches everything, a tenant
// token only `T/*` of its own tenant (never the admin-only routes), and tokenless mode
// exists only on loopback, guarded against DNS rebinding by the Host header check.
// Each route declares what it needs in `config.auth`; an undeclared route is admin-only.

import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { KeelConfig } from '../config.ts';
import { isLoopbackHost } from '../config.ts';
import { KeelError } from '../errors.ts';
import { isValidName, newId, newSecret } from '../ids.ts';
import type { TenantStore } from '../store/store.ts';

/**
 * open: no token (health, readiness, console shell, OpenAPI);
 * admin: the admin token only; tenant: admin or a token of the tenant in the path;
 * metrics: the admin token when one is configured.
 */
type AuthMode = 'open' | 'admin' | 'tenant' | 'metrics';

type Principal =
  { kind: 'anonymous' } | { kind: 'admin' } | { kind: 'tenant'; tenant: string; token_id: string };

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
    /** The route accepts `application/toml` bodies besides JSON. */
    accepts_toml?: boolean;
  }
  interface FastifyRequest {
    principal: Principal;
  }
}

const TOKEN_PREFIX = 'keel_';
// keel_<uuid id>_<base64url secret>: the id makes lookup one indexed read.
const TENANT_TOKEN =
  /^keel_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})_([A-Za-z0-9_-]{32,128})$/;
const MAX_BEARER_LENGTH = 512;

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** The stored form of a tenant token: sha256 hex. The token itself is never stored. */
function hashToken(token: string): string {
  return sha256(token).toString('hex');
}

export function mintTenantToken(): { id: string; token: string; hash: string } {
  const id = newId();
  const token = `${TOKEN_PREFIX}${id}_${newSecret()}`;
  return { id, token, hash: hashToken(token) };
}

function tenantTokenId(token: string): string | null {
  return TENANT_TOKEN.exec(token)?.[1] ?? null;
}

/** Constant time: both sides are hashed to equal-length digests before comparing. */
function adminTokenMatches(presented: string, adminToken: string): boolean {
  return timingSafeEqual(sha256(presented), sha256(adminToken));
}

function storedHashMatches(presented: string, storedHex: string): boolean {
  const stored = Buffer.from(storedHex, 'hex');
  const actual = sha256(presented);
  return stored.length === actual.length && timingSafeEqual(stored, actual);
}

/** main.ts calls this before listening: tokenless mode is for loopback listeners only. */
export function assertListenAllowed(config: Pick<KeelConfig, 'admin_token' | 'listen'>): void {
  if (config.admin_token !== null || isLoopbackHost(config.listen.host)) return;
  throw new KeelError(
    'INSECURE_LISTEN',
    `refusing to listen on ${config.listen.host}:${config.listen.port} without an admin token: ` +
      'set KEEL_ADMIN_TOKEN (or the env var named by auth.admin_token_env in keel.toml), ' +
      'or listen on a loopback address such as 127.0.0.1',
  );
}

/** The host part of a Host header (`[::1]:8080` → `[::1]`), or null when malformed. */
export function hostOfHeader(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(header.trim());
  return match?.[1] ?? null;
}

function isLoopbackHostHeader(header: string | undefined): boolean {
  const host = hostOfHeader(header);
  return host !== null && isLoopbackHost(host);
}

function bearerOf(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer +(\S+) *$/i.exec(header);
  const token = match?.[1];
  return token && token.length <= MAX_BEARER_LENGTH ? token : null;
}

async function principalOf(
  token: string,
  adminToken: string,
  store: TenantStore,
): Promise<Exclude<Principal, { kind: 'anonymous' }> | null> {
  if (adminTokenMatches(token, adminToken)) return { kind: 'admin' };
  const id = tenantTokenId(token);
  if (id === null) return null;
  // Looked up on every request, never cached: a deleted token stops working at once.
  const found = await store.findToken(id);
  if (!found || !storedHashMatches(token, found.hash)) return null;
  return { kind: 'tenant', tenant: found.tenant, token_id: found.id };
}

function tenantParam(request: FastifyRequest): string | undefined {
  const params = request.params as Record<string, string | undefined> | undefined;
  return params?.tenant;
}

async function authenticate(
  request: FastifyRequest,
  config: KeelConfig,
  store: TenantStore,
): Promise<void> {
  const mode: AuthMode = request.routeOptions.config.auth ?? 'admin';
  const adminToken = config.admin_token;
  if (adminToken === null) {
    // Tokenless mode: a browser tricked by DNS rebinding sends the attacker's Host.
    if (!isLoopbackHostHeader(request.headers.host)) {
      throw new KeelError(
        'HOST_NOT_ALLOWED',
        'without an admin token only loopback Host headers (localhost, 127.x, [::1]) are accepted',
      );
    }
    request.principal = { kind: 'admin' };
    return;
  }
  if (mode === 'open' || request.is404) return;

  const token = bearerOf(request);
  const principal = token === null ? null : await principalOf(token, adminToken, store);
  if (principal === null) {
    throw new KeelError(
      'UNAUTHENTICATED',
      token === null ? 'a bearer token is required' : 'the bearer token is not valid',
    );
  }
  request.principal = principal;
  if (principal.kind === 'admin') return;
  if (mode !== 'tenant') {
    throw new KeelError('FORBIDDEN', 'this route needs the admin token');
  }
  const tenant = tenantParam(request);
  if (tenant !== undefined && tenant !== principal.tenant) {
    throw new KeelError('FORBIDDEN', 'this token belongs to another tenant');
  }
}

/** Every route under a tenant answers 404 TENANT_NOT_FOUND before doing anything else. */
async function requireTenant(request: FastifyRequest, store: TenantStore): Promise<void> {
  const tenant = tenantParam(request);
  if (tenant === undefined || request.is404) return;
  if (!isValidName(tenant)) {
    throw new KeelError(
      'VALIDATION_FAILED',
      'params.tenant: must match ^[a-z0-9][a-z0-9._-]{0,63}$',
    );
  }
  if ((await store.getTenant(tenant)) === null) {
    throw new KeelError('TENANT_NOT_FOUND', `tenant ${tenant} not found`);
  }
}

export function installAuth(app: FastifyInstance, config: KeelConfig, store: TenantStore): void {
  // null here, set per request below (a shared object default would leak across requests).
  app.decorateRequest('principal', null as never);
  app.addHook('onRequest', async (request) => {
    request.principal = { kind: 'anonymous' };
    await authenticate(request, config, store);
    await requireTenant(request, store);
  });
}
