// A tenant's WebAssembly tools (docs/wasm-tools.md); rows in src/store/rules/wasm-tools.ts.

import type { JsonObject } from '../../types.ts';
import type { WasmToolInfo, WasmToolRecord } from '../shapes.ts';
import type { WasmToolInfoRow, WasmToolRow } from '../rules/wasm-tools.ts';
import {
  WASM_TOOL_INFO_COLUMNS,
  moduleDigest,
  toWasmTool,
  toWasmToolInfo,
} from '../rules/wasm-tools.ts';
import type { StoreContext } from './context.ts';
import type { Page } from '../store.ts';
import { WASM_TOOL_LIST } from '../rules/keyset.ts';
import { listByKey } from './keyset.ts';
import { requireTenant } from './guards.ts';
import { deleteNamedRow, refuseCreatePastQuota } from './named-rows.ts';
import { resourceChange } from '../rules/resource-changes.ts';

function infoRow(ctx: StoreContext, tenant: string, name: string): WasmToolInfoRow | undefined {
  return ctx
    .sql(`SELECT ${WASM_TOOL_INFO_COLUMNS} FROM wasm_tools WHERE tenant = ? AND name = ?`)
    .get(tenant, name) as WasmToolInfoRow | undefined;
}

export function putWasmTool(
  ctx: StoreContext,
  tenant: string,
  name: string,
  record: { manifest: JsonObject; module: Uint8Array },
  maxTools?: number,
): { tool: WasmToolInfo; created: boolean } {
  const module = Buffer.from(
    record.module.buffer,
    record.module.byteOffset,
    record.module.byteLength,
  );
  const values = [JSON.stringify(record.manifest), module, moduleDigest(module)];
  return ctx.write((changes) => {
    requireTenant(ctx, tenant);
    refuseCreatePastQuota(ctx, 'wasm_tools', tenant, name, maxTools);
    const existing = infoRow(ctx, tenant, name);
    const now = ctx.now();
    if (existing) {
      ctx
        .sql(
          `UPDATE wasm_tools SET manifest = ?, module = ?, sha256 = ?, updated_at = ?
           WHERE tenant = ? AND name = ?`,
        )
        .run(...values, Math.max(now, existing.updated_at + 1), tenant, name);
    } else {
      ctx
        .sql(
          `INSERT INTO wasm_tools (manifest, module, sha256, tenant, name, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(...values, tenant, name, now, now);
    }
    changes.push(resourceChange(tenant, 'wasm_tool', name));
    return {
      tool: toWasmToolInfo(infoRow(ctx, tenant, name) as WasmToolInfoRow),
      created: !existing,
    };
  });
}

export function getWasmTool(
  ctx: StoreContext,
  tenant: string,
  name: string,
): WasmToolRecord | null {
  const row = ctx
    .sql('SELECT * FROM wasm_tools WHERE tenant = ? AND name = ?')
    .get(tenant, name) as WasmToolRow | undefined;
  return row ? toWasmTool(row) : null;
}

export function listWasmTools(ctx: StoreContext, tenant: string): WasmToolInfo[] {
  const rows = ctx
    .sql(`SELECT ${WASM_TOOL_INFO_COLUMNS} FROM wasm_tools WHERE tenant = ? ORDER BY name`)
    .all(tenant) as WasmToolInfoRow[];
  return rows.map(toWasmToolInfo);
}

export function listWasmToolsPage(
  ctx: StoreContext,
  tenant: string,
  limit: number,
  cursor?: string,
): Page<WasmToolInfo> {
  return listByKey(
    ctx,
    { ...WASM_TOOL_LIST, tenant, limit, cursor },
    toWasmToolInfo,
    (row: WasmToolInfoRow) => row.name,
  );
}

export function deleteWasmTool(ctx: StoreContext, tenant: string, name: string): boolean {
  return deleteNamedRow(ctx, 'wasm_tools', tenant, name, 'wasm_tool');
}
