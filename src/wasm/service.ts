// What the T/wasm-tools routes do (docs/wasm-tools.md): check a module and its manifest
// at PUT — nothing is stored when either is refused — and keep the compiled module.

import type { ValidateFunction } from 'ajv';
import { KeelError } from '../errors.ts';
import type { ArtifactStore, WasmToolStore } from '../store/store.ts';
import type { WasmToolInfo } from '../store/shapes.ts';
import type { JsonObject } from '../types.ts';
import type { WasmToolBody } from './manifest.ts';
import { MAX_MODULE_BYTES, wasmManifestSchema } from './manifest.ts';
import { prepareModule } from './module-check.ts';
import type { CompiledModules } from './modules.ts';
import { moduleDigest } from '../store/rules/wasm-tools.ts';

export interface WasmServiceDeps {
  store: WasmToolStore & Pick<ArtifactStore, 'getArtifact'>;
  modules: CompiledModules;
  compile: (schema: Record<string, unknown>) => ValidateFunction;
  /** tenant_limits.wasm_tools: a create past it is 403 QUOTA_EXCEEDED. */
  maxTools: number;
}

export interface WasmService {
  put(
    tenant: string,
    name: string,
    body: WasmToolBody,
  ): Promise<{ tool: WasmToolInfo; created: boolean }>;
}

function refuse(field: string, message: string): KeelError {
  return new KeelError('VALIDATION_FAILED', `${field}: ${message}`, { field });
}

async function moduleBytes(
  deps: WasmServiceDeps,
  tenant: string,
  body: WasmToolBody,
): Promise<Uint8Array> {
  let bytes: Uint8Array;
  if (body.module_artifact !== undefined) {
    const artifact = await deps.store.getArtifact(tenant, body.module_artifact);
    if (!artifact) {
      throw new KeelError('ARTIFACT_NOT_FOUND', `artifact ${body.module_artifact} not found`, {
        field: 'module_artifact',
      });
    }
    bytes = artifact.body;
  } else {
    bytes = Buffer.from(body.module_base64 as string, 'base64');
  }
  if (bytes.byteLength > MAX_MODULE_BYTES) {
    throw new KeelError(
      'WASM_MODULE_INVALID',
      `the module has ${bytes.byteLength} bytes; at most ${MAX_MODULE_BYTES}`,
      { field: 'module' },
    );
  }
  return bytes;
}

function checkInputSchema(deps: WasmServiceDeps, schema: Record<string, unknown>): void {
  if (schema.type !== 'object') throw refuse('input_schema', 'the root must be {"type": "object"}');
  try {
    deps.compile(schema);
  } catch (error) {
    throw refuse('input_schema', `not a usable JSON Schema: ${(error as Error).message}`);
  }
}

export function createWasmService(deps: WasmServiceDeps): WasmService {
  return {
    async put(tenant, name, body) {
      checkInputSchema(deps, body.input_schema);
      const manifest = wasmManifestSchema.parse({
        description: body.description,
        input_schema: body.input_schema,
        effect: body.effect,
        timeout_ms: body.timeout_ms,
        memory_limit_mb: body.memory_limit_mb,
        max_output_bytes: body.max_output_bytes,
      });
      const prepared = await prepareModule(
        await moduleBytes(deps, tenant, body),
        manifest.memory_limit_mb,
      );
      const stored = await deps.store.putWasmTool(
        tenant,
        name,
        {
          manifest: manifest as unknown as JsonObject,
          module: prepared.bytes,
        },
        deps.maxTools,
      );
      deps.modules.remember(moduleDigest(prepared.bytes), prepared.module);
      return stored;
    },
  };
}
