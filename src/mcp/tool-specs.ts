// A discovered MCP tool as a keel tool: family `mcp`, effect from its annotations,
// arguments checked against the server's JSON Schema, the call sent through the
// tenant's session with the idempotency key in `_meta`. Every failure is a ToolError,
// so the model reads `{ok: false}` and the run goes on.

import type { ValidateFunction } from 'ajv';
import { z } from 'zod';
import type { AnyToolSpec, ToolEffect } from '../tools/tool.ts';
import { ToolError, defineTool } from '../tools/tool.ts';
import type { JsonObject } from '../types.ts';
import { contentText, mapToolResult } from './content.ts';
import { MCP_FAMILY, mcpToolName } from './names.ts';
import type { DiscoveredTool } from './server-spec.ts';
import type { McpSessions, SessionKey } from './sessions.ts';
import { McpCallError } from './sessions.ts';

export function effectOf(annotations: DiscoveredTool['annotations']): ToolEffect {
  if (annotations.readOnlyHint === true) return 'read_only';
  if (annotations.idempotentHint === true) return 'idempotent';
  return 'effectful';
}

export function mcpToolSpec(
  key: SessionKey,
  tool: DiscoveredTool,
  validate: ValidateFunction,
  sessions: McpSessions,
): AnyToolSpec {
  const effect = effectOf(tool.annotations);
  const input = z.unknown().superRefine((value, ctx) => {
    if (!validate(value)) {
      const message = (validate.errors ?? [])
        .map((error) => `${error.instancePath || '(root)'} ${error.message ?? 'is invalid'}`)
        .join('; ');
      ctx.addIssue({ code: 'custom', message });
    }
  });
  const { $schema: _ignored, ...inputSchema } = tool.input_schema;
  return defineTool({
    name: mcpToolName(key.server, tool.name),
    family: MCP_FAMILY,
    description: tool.description || `${tool.name} (MCP server ${key.server})`,
    input,
    effect,
    inputSchema: inputSchema as JsonObject,
    async run(args, context) {
      let result;
      try {
        result = await sessions.call(key, tool.name, args as Record<string, unknown>, {
          signal: context.signal,
          timeoutMs: context.deadline - context.ports.now().getTime(),
          idempotencyKey: context.idempotency_key,
        });
      } catch (error) {
        if (context.signal.aborted) throw error;
        if (error instanceof McpCallError && error.kind === 'exited') {
          // Effectful: it may have happened; the model must not assume either way.
          throw new ToolError(
            effect === 'effectful' ? 'OUTCOME_UNKNOWN' : 'MCP_SERVER_EXITED',
            error.message,
          );
        }
        throw new ToolError('MCP_PROTOCOL_ERROR', (error as Error).message);
      }
      if (result.isError) {
        const text = contentText(result.content);
        throw new ToolError('MCP_TOOL_ERROR', text || `${tool.name} reported an error`);
      }
      return mapToolResult(result);
    },
  });
}
