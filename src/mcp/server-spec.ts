// The body of `PUT T/mcp/:name` (docs/mcp.md). Strict: a tenant names a server the
// operator declared (stdio) or gives the URL of its own streamable HTTP server; a
// `command` or `args` anywhere is refused — tenants never start programs on the host.

import { z } from 'zod';

export const MCP_SERVER_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;
export const SECRET_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/**
 * A secret is sent as an HTTP header value, so it must be one: tab, visible ASCII and
 * space, Latin-1 letters and signs (RFC 9110 field-value, without the C1 controls).
 * Anything else (CR, LF, NUL, other controls, characters past U+00FF) would be refused
 * by the HTTP client with an error quoting the whole value — into tool errors, traces
 * and the model's context — so it is refused when the secret is PUT, and a stored one
 * (written before this rule) is refused at connect without being shown.
 */
export const SECRET_VALUE = /^[\t\u0020-\u007e\u00a0-\u00ff]+$/;

export const secretValueSchema = z.string().min(1).max(16_384).regex(SECRET_VALUE, {
  message:
    'must be a valid HTTP header value: tab, printable ASCII and Latin-1 only (no CR, LF, NUL or other control characters)',
});

const stdioTransport = z.strictObject({
  type: z.literal('stdio'),
  server: z.string().regex(MCP_SERVER_NAME).describe('a name declared in [mcp.stdio.<name>]'),
});

const httpTransport = z.strictObject({
  type: z.literal('http'),
  url: z.url({ protocol: /^https?$/ }),
  /** Header name → name of a tenant secret holding its value. */
  headers_from: z
    .record(z.string().regex(/^[A-Za-z0-9-]{1,64}$/), z.string().regex(SECRET_NAME))
    .optional(),
});

export const mcpServerBody = z.strictObject({
  enabled: z.boolean().default(true),
  transport: z.discriminatedUnion('type', [stdioTransport, httpTransport]),
  allowed_tools: z.array(z.string().min(1).max(128)).max(1000).optional(),
});

export type McpServerSpec = z.infer<typeof mcpServerBody>;
export type McpTransportSpec = McpServerSpec['transport'];

/** The keys that would let a tenant choose a program: refused with their own message. */
export function programKeys(body: unknown): string[] {
  const found: string[] = [];
  const visit = (value: unknown, path: string, depth: number) => {
    if (depth > 4 || value === null || typeof value !== 'object' || Array.isArray(value)) return;
    for (const [key, inner] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key;
      if (key === 'command' || key === 'args') found.push(at);
      visit(inner, at, depth + 1);
    }
  };
  visit(body, '', 0);
  return found;
}

/** A discovered tool as stored with its server (the MCP `tools/list` entry, trimmed). */
export interface DiscoveredTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  annotations: { readOnlyHint?: boolean; idempotentHint?: boolean };
}
