// Opens an MCP client for one server of one tenant: the operator's declaration for stdio
// (cleared environment plus the declared variables), or the tenant's URL for streamable
// HTTP (the public-web boundary, headers from the tenant's secrets). The SDK speaks the
// protocol; nothing here writes a JSON-RPC message by hand. The SDK (with its own zod
// schemas, ~0.5 s of CPU to load) is imported on the first connect, so a keel whose
// tenants use no MCP server never loads it.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Agent as UndiciAgent } from 'undici';
import type { McpSettings } from '../config.ts';
import { KeelError } from '../errors.ts';
import type { SecretStore } from '../store/store.ts';
import type { ParsedAddress } from '../web/address.ts';
import { pinnedLookup } from '../web/pinned-lookup.ts';
import { checkPublicHost } from '../web/public-host.ts';
import type { McpTransportSpec } from './server-spec.ts';
import { SECRET_VALUE } from './server-spec.ts';

/** Where a server's output beyond this stays unread in error messages. */
const STDERR_TAIL_BYTES = 2048;

export interface ConnectDeps {
  settings: McpSettings;
  secrets: Pick<SecretStore, 'getSecretValue'>;
}

export interface OpenedClient {
  client: Client;
  /** The last lines the server wrote to stderr (stdio), for error messages. */
  stderrTail(): string;
  /** The process id of a stdio server (null for HTTP). */
  pid(): number | null;
  /** `text` with the secrets this client sends blanked out: for every error it raises. */
  scrub(text: string): string;
}

/** Where a secret's value would appear in an error message. */
const SCRUBBED = '[secret]';

/**
 * The forms a value takes in a server's answer: as sent, JSON-escaped (a server that
 * echoes the request as JSON; also with non-ASCII as \uXXXX, as Python writes it) and
 * percent-encoded (one that echoes a URL).
 */
function secretForms(value: string): string[] {
  const json = JSON.stringify(value).slice(1, -1);
  const asciiJson = json.replace(
    /[\u0080-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return [value, json, asciiJson, encodeURIComponent(value)];
}

/** `text` without any of `values` in any form (a server may echo a header back in its error). */
export function scrubSecrets(text: string, values: readonly string[]): string {
  // Longest first, so no form is cut apart by a shorter one before it is blanked.
  const forms = [...new Set(values.filter(Boolean).flatMap(secretForms))].sort(
    (a, b) => b.length - a.length,
  );
  return forms.reduce((out, form) => out.split(form).join(SCRUBBED), text);
}

/**
 * The server's whole environment. The SDK adds HOME, PATH, USER … of keel's own
 * environment to whatever it is given; an undefined value makes node's spawn leave the
 * variable out, so only the declared variables reach the server.
 */
function clearedEnvironment(
  inherited: readonly string[],
  declared: Record<string, string>,
): Record<string, string> {
  const env: Record<string, string | undefined> = {};
  for (const name of inherited) env[name] = undefined;
  return { ...env, ...declared } as Record<string, string>;
}

/** Refuses a stdio server the operator did not declare or did not open to this tenant. */
export function stdioDeclaration(settings: McpSettings, tenant: string, server: string) {
  // Own entries only: "constructor" must not find Object.prototype's (it answered 500).
  const declared = Object.hasOwn(settings.stdio, server) ? settings.stdio[server] : undefined;
  if (!declared || (declared.tenants !== null && !declared.tenants.includes(tenant))) {
    // The same answer either way: a tenant learns nothing about other tenants' servers.
    throw new KeelError(
      'VALIDATION_FAILED',
      `transport.server: no stdio MCP server "${server}" is declared for this tenant`,
      { field: 'transport.server' },
    );
  }
  return declared;
}

/**
 * The public-web boundary for a tenant's server URL: every address the host resolves to
 * must be public (src/web/address.ts) unless the operator allows the host. Returns the
 * address to pin connections to (null for an allowed host).
 */
async function checkPublicUrl(
  url: URL,
  allowHosts: readonly string[],
): Promise<ParsedAddress | null> {
  const verdict = await checkPublicHost(url, allowHosts, '[mcp] allow_hosts');
  if (!verdict.ok) {
    throw new KeelError('VALIDATION_FAILED', `transport.url: ${verdict.reason}`, {
      field: 'transport.url',
    });
  }
  return verdict.pinned;
}

/** fetch whose connections go to the checked address (no DNS change between check and connect). */
async function pinnedFetch(address: ParsedAddress): Promise<FetchLike> {
  const { Agent, fetch: undiciFetch } = await import('undici');
  const dispatcher = new Agent({
    connect: { lookup: pinnedLookup(address) } as unknown as UndiciAgent.Options['connect'],
  });
  return (input, init) =>
    undiciFetch(input as string | URL, {
      ...(init as Record<string, unknown>),
      dispatcher,
    }) as unknown as Promise<Response>;
}

/**
 * Header values from the tenant's secrets; a name with no secret is a 400, and so is a
 * secret that is no header value (stored before PUT checked values): named, never shown.
 */
export async function secretHeaders(
  deps: ConnectDeps,
  tenant: string,
  headersFrom: Record<string, string> | undefined,
): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  for (const [header, secret] of Object.entries(headersFrom ?? {})) {
    const value = await deps.secrets.getSecretValue(tenant, secret);
    if (value === null) {
      throw new KeelError(
        'VALIDATION_FAILED',
        `transport.headers_from.${header}: this tenant has no secret "${secret}"`,
        { field: `transport.headers_from.${header}` },
      );
    }
    if (!SECRET_VALUE.test(value)) {
      throw new KeelError(
        'VALIDATION_FAILED',
        `transport.headers_from.${header}: secret "${secret}" is not a valid HTTP header value (a control or non-Latin-1 character); PUT it again`,
        { field: `transport.headers_from.${header}` },
      );
    }
    headers[header] = value;
  }
  return headers;
}

/** Checks what a PUT may store without connecting (declared server, URL, secrets). */
export async function checkTransport(
  deps: ConnectDeps,
  tenant: string,
  transport: McpTransportSpec,
): Promise<void> {
  if (transport.type === 'stdio') {
    stdioDeclaration(deps.settings, tenant, transport.server);
    return;
  }
  // Secrets first: a headers_from naming no secret is a 400 whatever the URL does.
  await secretHeaders(deps, tenant, transport.headers_from);
  await checkPublicUrl(new URL(transport.url), deps.settings.allow_hosts);
}

export async function openClient(
  deps: ConnectDeps,
  tenant: string,
  transport: McpTransportSpec,
  signal?: AbortSignal,
): Promise<OpenedClient> {
  let wire: Transport;
  let tail = '';
  let pid: () => number | null = () => null;
  let secrets: string[] = [];
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  if (transport.type === 'stdio') {
    const declared = stdioDeclaration(deps.settings, tenant, transport.server);
    const { DEFAULT_INHERITED_ENV_VARS, StdioClientTransport } =
      await import('@modelcontextprotocol/sdk/client/stdio.js');
    const stdio = new StdioClientTransport({
      command: declared.command,
      args: declared.args,
      env: clearedEnvironment(DEFAULT_INHERITED_ENV_VARS, declared.env),
      stderr: 'pipe',
      maxBufferSize: deps.settings.max_message_bytes,
    } as ConstructorParameters<typeof StdioClientTransport>[0]);
    stdio.stderr?.on('data', (chunk: Buffer) => {
      tail = (tail + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
    });
    pid = () => stdio.pid;
    wire = stdio;
  } else {
    const url = new URL(transport.url);
    const pinned = await checkPublicUrl(url, deps.settings.allow_hosts);
    const headers = await secretHeaders(deps, tenant, transport.headers_from);
    secrets = Object.values(headers);
    const { StreamableHTTPClientTransport } =
      await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    // Redirects stay within the origin (the SDK's default policy), so they stay pinned.
    wire = new StreamableHTTPClientTransport(url, {
      requestInit: { headers },
      ...(pinned && { fetch: await pinnedFetch(pinned) }),
    });
  }
  const client = new Client({ name: 'keel', version: '1' }, { capabilities: {} });
  try {
    await client.connect(wire, { ...(signal && { signal }) });
  } catch (error) {
    await client.close().catch(() => undefined);
    throw new Error(scrubSecrets(withTail(describe(error), tail), secrets));
  }
  return { client, stderrTail: () => tail, pid, scrub: (text) => scrubSecrets(text, secrets) };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function withTail(message: string, tail: string): string {
  const last = tail.trim().split('\n').slice(-5).join('\n');
  return last ? `${message} (server said: ${last})` : message;
}
