// Lists a server's tools and checks them before anything is stored: every input schema
// compiles, every sanitised name is unique within the tenant, allowed_tools names
// discovered tools. A server that lies in its tool list is a clear 400 at PUT.

import { Ajv } from 'ajv';
import type { ValidateFunction } from 'ajv';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { KeelError } from '../errors.ts';
import { mcpToolName } from './names.ts';
import type { DiscoveredTool } from './server-spec.ts';

const MAX_TOOLS = 1000;

export async function listServerTools(
  client: Client,
  signal?: AbortSignal,
): Promise<DiscoveredTool[]> {
  const tools: DiscoveredTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {}, { ...(signal && { signal }) });
    for (const tool of page.tools) {
      tools.push({
        name: tool.name,
        description: tool.description ?? tool.title ?? '',
        input_schema: tool.inputSchema as Record<string, unknown>,
        annotations: {
          ...(tool.annotations?.readOnlyHint !== undefined && {
            readOnlyHint: tool.annotations.readOnlyHint,
          }),
          ...(tool.annotations?.idempotentHint !== undefined && {
            idempotentHint: tool.annotations.idempotentHint,
          }),
        },
      });
    }
    cursor = page.nextCursor;
  } while (cursor && tools.length < MAX_TOOLS);
  return tools;
}

/** One Ajv per process: compiled validators are cached by the callers. */
export function createSchemaCompiler(): (schema: Record<string, unknown>) => ValidateFunction {
  const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false });
  return (schema) => {
    // Servers built on newer schema drafts name them; the keywords tools use are shared.
    const { $schema: _ignored, ...rest } = schema;
    return ajv.compile(rest);
  };
}

/** Throws a 400 naming the first problem of a server's tool list. */
export function checkDiscovered(
  server: string,
  tools: readonly DiscoveredTool[],
  allowedTools: readonly string[] | undefined,
  otherNames: ReadonlySet<string>,
  compile: (schema: Record<string, unknown>) => ValidateFunction,
): void {
  const seen = new Map<string, string>();
  for (const tool of tools) {
    const schema = tool.input_schema;
    if (typeof schema !== 'object' || schema === null || schema.type !== 'object') {
      throw new KeelError(
        'MCP_SERVER_FAILED',
        `the server's tool "${tool.name}" has an input schema that is not an object schema`,
      );
    }
    try {
      compile(schema);
    } catch (error) {
      throw new KeelError(
        'MCP_SERVER_FAILED',
        `the server's tool "${tool.name}" has an invalid input schema: ${(error as Error).message}`,
      );
    }
    const name = mcpToolName(server, tool.name);
    const clash = seen.get(name) ?? (otherNames.has(name) ? 'another server of this tenant' : null);
    if (clash) {
      throw new KeelError(
        'MCP_SERVER_FAILED',
        `the server's tool "${tool.name}" becomes ${name}, which ${clash === 'another server of this tenant' ? clash : `the tool "${clash}"`} already has`,
      );
    }
    seen.set(name, tool.name);
  }
  for (const wanted of allowedTools ?? []) {
    if (!tools.some((tool) => tool.name === wanted)) {
      throw new KeelError(
        'VALIDATION_FAILED',
        `allowed_tools: the server has no tool "${wanted}"`,
        { field: 'allowed_tools' },
      );
    }
  }
}
