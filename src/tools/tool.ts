// The shape of a tool: one zod schema gives validation and the JSON Schema the model
// sees; `effect` tells the runtime what it may repeat after a crash (docs/agent-loop.md).

import { z } from 'zod';
import type { JsonObject, JsonValue, ToolErrorCode } from '../types.ts';
import type { ArtifactPort } from './builtin/artifact-port.ts';
import type { MemoryPort } from './builtin/memory-port.ts';
import type { SchedulePort } from './builtin/schedule-port.ts';
import type { WebPort } from './builtin/web-port.ts';
import type { ToolEffect } from './tool-effect.ts';

export { TOOL_EFFECTS, type ToolEffect } from './tool-effect.ts';

/**
 * Tenant-scoped capabilities handed to a tool. Tools never see the store itself; each
 * capability (artifacts, schedules, web, memory) arrives here as a narrow port.
 */
export interface ToolPorts {
  /** The current time; injectable so clock-dependent tools are testable. */
  now(): Date;
  // Capability ports (built-in capabilities). Optional: a context without one (unit
  // tests, a store without the capability) makes the tool answer with a clear error.
  artifacts?: ArtifactPort;
  /** Bound to the calling agent and scope. */
  schedules?: SchedulePort;
  /** Absent when the process has no web client. */
  web?: WebPort;
  /** Bound to the run's tenant; absent when the process has no memory service. */
  memory?: MemoryPort;
}

export interface ToolContext {
  tenant: string;
  agent: string;
  scope: string;
  run_id: string;
  call_id: string;
  /** `<run_id>:<call_id>`: the same across re-executions of one call. */
  idempotency_key: string;
  /** Epoch ms after which the call is abandoned (tool_timeout_ms or the run deadline). */
  deadline: number;
  signal: AbortSignal;
  ports: ToolPorts;
}

/** A tool error the model should see with a specific code (the run goes on). */
export class ToolError extends Error {
  readonly code: ToolErrorCode;
  constructor(code: ToolErrorCode, message: string) {
    super(message);
    this.name = 'ToolError';
    this.code = code;
  }
}

export interface ToolSpec<Input = unknown> {
  name: string;
  family: string;
  description: string;
  input: z.ZodType<Input>;
  effect: ToolEffect;
  /** The JSON Schema the model sees when `input` was not built from it (MCP tools). */
  inputSchema?: JsonObject;
  run(input: Input, context: ToolContext): Promise<JsonValue>;
}

/** Erases the input type so tools of different inputs fit in one list. */
export type AnyToolSpec = ToolSpec<never>;

export function defineTool<Input>(spec: ToolSpec<Input>): AnyToolSpec {
  return spec as unknown as AnyToolSpec;
}

export function inputJsonSchema(tool: AnyToolSpec): JsonObject {
  if (tool.inputSchema) return tool.inputSchema;
  const schema = z.toJSONSchema(tool.input as z.ZodType, { io: 'input' }) as JsonObject;
  delete schema.$schema;
  return schema;
}
