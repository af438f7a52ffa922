// A registered WebAssembly tool as a keel tool: `wasm_<name>` in family `wasm`, arguments
// checked against the manifest's JSON Schema, run in the sandbox pool with the JSON
// envelope {arguments, idempotency_key} on stdin. Every guest failure is a ToolError
// with its own code, so the model reads `{ok: false}` and the run goes on.

import type { ValidateFunction } from 'ajv';
import { z } from 'zod';
import { isKeelError } from '../errors.ts';
import type { WasmToolInfo } from '../store/shapes.ts';
import type { AnyToolSpec } from '../tools/tool.ts';
import { ToolError, defineTool } from '../tools/tool.ts';
import type { JsonObject } from '../types.ts';
import type { WasmManifest } from './manifest.ts';
import { WASM_FAMILY, wasmToolName } from './manifest.ts';
import type { CompiledModules } from './modules.ts';
import type { WasmPool } from './pool.ts';

export interface WasmRunner {
  modules: CompiledModules;
  /** The process's sandbox pool (started on first use). */
  pool(): WasmPool;
}

export function wasmToolSpec(
  info: WasmToolInfo,
  validate: ValidateFunction,
  runner: WasmRunner,
): AnyToolSpec {
  const manifest = info.manifest as unknown as WasmManifest;
  const input = z.unknown().superRefine((value, ctx) => {
    if (!validate(value)) {
      const message = (validate.errors ?? [])
        .map((error) => `${error.instancePath || '(root)'} ${error.message ?? 'is invalid'}`)
        .join('; ');
      ctx.addIssue({ code: 'custom', message });
    }
  });
  return defineTool({
    name: wasmToolName(info.name),
    family: WASM_FAMILY,
    description: manifest.description,
    input,
    effect: manifest.effect,
    inputSchema: manifest.input_schema as JsonObject,
    async run(args, context) {
      const module = await runner.modules
        .load(info.tenant, info.name, info.sha256)
        .catch((error: unknown) => {
          // Stored bytes the cap refuses: a tool error, and the module never runs.
          if (isKeelError(error, 'WASM_MODULE_INVALID')) {
            throw new ToolError(error.code, error.message);
          }
          throw error;
        });
      if (!module) {
        throw new ToolError('TOOL_NOT_FOUND', `${wasmToolName(info.name)} was removed or replaced`);
      }
      const envelope = { arguments: args, idempotency_key: context.idempotency_key };
      const result = await runner.pool().run({
        tenant: info.tenant,
        module,
        input: Buffer.from(JSON.stringify(envelope)),
        maxOutputBytes: manifest.max_output_bytes,
        memoryLimitBytes: manifest.memory_limit_mb * 1_048_576,
        timeoutMs: manifest.timeout_ms,
        deadline: context.deadline,
        signal: context.signal,
      });
      if (result.ok) return result.value;
      // The runtime answers an aborted call itself (TOOL_ABORTED).
      if (result.code === 'ABORTED') throw new Error(result.message);
      throw new ToolError(result.code, result.message);
    },
  });
}
