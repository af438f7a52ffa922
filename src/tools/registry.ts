// Which tools exist, and which of them one agent may see. An agent's visible set is
// narrowed by allowed_families (omitted = all, [] = none) and then allowed_tools.

import type { AgentSpec, JsonObject } from '../types.ts';
import type { AnyToolSpec, ToolEffect } from './tool.ts';
import { inputJsonSchema } from './tool.ts';

export interface ToolDescription {
  name: string;
  family: string;
  description: string;
  input_schema: JsonObject;
  effect: ToolEffect;
}

export interface ToolRegistry {
  get(name: string): AnyToolSpec | undefined;
  all(): AnyToolSpec[];
  visibleTo(agent: Pick<AgentSpec, 'allowed_families' | 'allowed_tools'>): AnyToolSpec[];
  describe(tool: AnyToolSpec): ToolDescription;
}

export function createToolRegistry(tools: readonly AnyToolSpec[]): ToolRegistry {
  const byName = new Map<string, AnyToolSpec>();
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new Error(`tool ${tool.name} is registered twice`);
    byName.set(tool.name, tool);
  }
  const schemas = new Map<string, JsonObject>();
  return {
    get: (name) => byName.get(name),
    all: () => [...byName.values()],
    visibleTo(agent) {
      return [...byName.values()].filter(
        (tool) =>
          (agent.allowed_families === undefined || agent.allowed_families.includes(tool.family)) &&
          (agent.allowed_tools === undefined || agent.allowed_tools.includes(tool.name)),
      );
    },
    describe(tool) {
      let schema = schemas.get(tool.name);
      if (!schema) {
        schema = inputJsonSchema(tool);
        schemas.set(tool.name, schema);
      }
      return {
        name: tool.name,
        family: tool.family,
        description: tool.description,
        input_schema: schema,
        effect: tool.effect,
      };
    },
  };
}
