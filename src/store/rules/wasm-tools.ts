// Rows of wasm_tools and their store shapes, for both backends (docs/wasm-tools.md).
// Listings leave the module bytes out: a tool's module is read only when it is compiled.

import { createHash } from 'node:crypto';
import type { JsonObject } from '../../types.ts';
import { iso, parseJson } from '../rows.ts';
import type { WasmToolInfo, WasmToolRecord } from '../shapes.ts';

/** The columns of a listing (no module). */
export const WASM_TOOL_INFO_COLUMNS =
  'tenant, name, manifest, sha256, length(module) AS module_bytes, created_at, updated_at';

export interface WasmToolInfoRow {
  tenant: string;
  name: string;
  manifest: string;
  sha256: string;
  module_bytes: number;
  created_at: number;
  updated_at: number;
}

export interface WasmToolRow extends Omit<WasmToolInfoRow, 'module_bytes'> {
  module: Buffer;
}

export function moduleDigest(module: Uint8Array): string {
  return createHash('sha256').update(module).digest('hex');
}

export function toWasmToolInfo(row: WasmToolInfoRow): WasmToolInfo {
  return {
    tenant: row.tenant,
    name: row.name,
    manifest: parseJson<JsonObject>(row.manifest),
    sha256: row.sha256,
    module_bytes: Number(row.module_bytes),
    created_at: iso(Number(row.created_at)),
    updated_at: iso(Number(row.updated_at)),
  };
}

export function toWasmTool(row: WasmToolRow): WasmToolRecord {
  const module = new Uint8Array(row.module.buffer, row.module.byteOffset, row.module.byteLength);
  return {
    ...toWasmToolInfo({ ...row, module_bytes: module.byteLength }),
    module,
  };
}
