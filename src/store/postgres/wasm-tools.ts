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
import type { PgContext, Sql } from './context.ts';
import type { Page } from '../store.ts';
import { WASM_TOOL_LIST } from '../rules/keyset.ts';
import { listByKey } from './keyset.ts';
import { requireTenant } from './guards.ts';
import { deleteNamedRow, refuseCreatePastQuota } from './named-rows.ts';
import { resourceChange } from '../rules/resource-changes.ts';

export async function putWasmTool(
  ctx: PgContext,
  tenant: string,
  name: string,
  record: { manifest: JsonObject; module: Uint8Array },
  maxTools?: number,
): Promise<{ tool: WasmToolInfo; created: boolean }> {
  const module = Buffer.from(
    record.module.buffer,
    record.module.byteOffset,
    record.module.byteLength,
  );
  const values = [JSON.stringify(record.manifest), module, moduleDigest(module)];
  return ctx.write(async (tx) => {
    await requireTenant(tx, tenant);
    await refuseCreatePastQuota(tx, 'wasm_tools', tenant, name, maxTools);
    const row = await tx.one<WasmToolInfoRow & { created: boolean }>(
      `INSERT INTO wasm_tools (manifest, module, sha256, tenant, name, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $6)
       ON CONFLICT (tenant, name) DO UPDATE
         SET manifest = EXCLUDED.manifest, module = EXCLUDED.module, sha256 = EXCLUDED.sha256,
             updated_at = GREATEST(EXCLUDED.updated_at, wasm_tools.updated_at + 1)
       RETURNING ${WASM_TOOL_INFO_COLUMNS}, (xmax = 0) AS created`,
      [...values, tenant, name, tx.now],
    );
    const inserted = row as WasmToolInfoRow & { created: boolean };
    tx.changes.push(resourceChange(tenant, 'wasm_tool', name));
    return { tool: toWasmToolInfo(inserted), created: inserted.created };
  });
}

export async function getWasmTool(
  sql: Sql,
  tenant: string,
  name: string,
): Promise<WasmToolRecord | null> {
  const row = await sql.one<WasmToolRow>(
    'SELECT * FROM wasm_tools WHERE tenant = $1 AND name = $2',
    [tenant, name],
  );
  return row ? toWasmTool(row) : null;
}

export async function listWasmTools(sql: Sql, tenant: string): Promise<WasmToolInfo[]> {
  const rows = await sql.rows<WasmToolInfoRow>(
    `SELECT ${WASM_TOOL_INFO_COLUMNS} FROM wasm_tools WHERE tenant = $1 ORDER BY name`,
    [tenant],
  );
  return rows.map(toWasmToolInfo);
}

export async function listWasmToolsPage(
  sql: Sql,
  tenant: string,
  limit: number,
  cursor?: string,
): Promise<Page<WasmToolInfo>> {
  return listByKey(
    sql,
    { ...WASM_TOOL_LIST, tenant, limit, cursor },
    toWasmToolInfo,
    (row: WasmToolInfoRow) => row.name,
  );
}

export function deleteWasmTool(ctx: PgContext, tenant: string, name: string): Promise<boolean> {
  return deleteNamedRow(ctx, 'wasm_tools', tenant, name, 'wasm_tool');
}
