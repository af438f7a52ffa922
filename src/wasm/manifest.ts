// The body of PUT T/wasm-tools/:name (docs/wasm-tools.md): the manifest, and the module
// as base64 or as the path of one of the tenant's artifacts (for modules over the body
// limit). What is stored is the manifest without the module fields.

import { z } from 'zod';
import { TOOL_EFFECTS } from '../tools/tool.ts';

/** `wasm_<name>` stays within the 64 characters every provider accepts. */
export const WASM_TOOL_NAME = /^[a-z][a-z0-9_]{0,58}$/;
export const WASM_FAMILY = 'wasm';
/** The largest module keel accepts (after base64 decoding, or as an artifact). */
export const MAX_MODULE_BYTES = 32 * 1_048_576;

export function wasmToolName(name: string): string {
  return `wasm_${name}`;
}

export const wasmManifestSchema = z.strictObject({
  description: z.string().min(1).max(1024),
  input_schema: z
    .record(z.string(), z.unknown())
    .default({ type: 'object' })
    .describe('JSON Schema of the arguments; its root must be {"type": "object", …}'),
  effect: z.enum(TOOL_EFFECTS),
  timeout_ms: z.number().int().min(10).max(300_000).default(5_000),
  memory_limit_mb: z.number().int().min(1).max(1024).default(64),
  max_output_bytes: z.number().int().min(16).max(8_388_608).default(1_048_576),
});
export type WasmManifest = z.output<typeof wasmManifestSchema>;

export const wasmToolBody = wasmManifestSchema
  .extend({
    module_base64: z
      .string()
      .min(1)
      .regex(/^[A-Za-z0-9+/]+={0,2}$/, { message: 'must be base64' })
      .optional(),
    module_artifact: z.string().min(1).max(1024).optional(),
  })
  .refine((body) => (body.module_base64 === undefined) !== (body.module_artifact === undefined), {
    message: 'give exactly one of module_base64 and module_artifact',
    path: ['module_base64'],
  });
export type WasmToolBody = z.output<typeof wasmToolBody>;
