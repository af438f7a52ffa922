// A tenant's WebAssembly tools (docs/wasm-tools.md), for both backends; rows in
// src/store/rules/wasm-tools.ts.

import type { JsonObject } from '../../types.ts';
import type { WasmToolInfo, WasmToolRecord } from '../shapes.ts';
import type { WasmToolInfoRow, WasmToolRow } from '../rules/wasm-tools.ts';
import { WASM_TOOL_INFO_COLUMNS, toWasmTool, toWasmToolInfo } from '../rules/wasm-tools.ts';
import { WASM_TOOL_LIST } from '../rules/keyset.ts';
import { resourceChange } from '../rules/resource-changes.ts';
import { raw, sql } from '../sql/query.ts';
import type { Op, Reads, Writes } from '../sql/steps.ts';
import { requireTenant } from './guards.ts';
import { listByName } from './keyset.ts';
import { deleteNamedRow, refuseCreatePastQuota } from './named-rows.ts';
import { bumpedUpdatedAt, wasCreated } from './upsert.ts';

const INFO_COLUMNS = raw(WASM_TOOL_INFO_COLUMNS);

/**
 * `sha256` is moduleDigest(record.module) (../rules/wasm-tools.ts), computed before the
 * write so the transaction is never held open while the module is hashed.
 */
export function* putWasmTool(
  tx: Writes,
  tenant: string,
  name: string,
  record: { manifest: JsonObject; module: Uint8Array },
  sha256: string,
  maxTools?: number,
): Op<{ tool: WasmToolInfo; created: boolean }> {
  const module = Buffer.from(
    record.module.buffer,
    record.module.byteOffset,
    record.module.byteLength,
  );
  yield* requireTenant(tx, tenant);
  yield* refuseCreatePastQuota(tx, 'wasm_tools', tenant, name, maxTools);
  const row = yield* tx.one<WasmToolInfoRow>(
    sql`INSERT INTO wasm_tools (manifest, module, sha256, tenant, name, created_at, updated_at)
        VALUES (${JSON.stringify(record.manifest)}, ${module}, ${sha256},
                ${tenant}, ${name}, ${tx.now}, ${tx.now})
        ON CONFLICT (tenant, name) DO UPDATE
          SET manifest = excluded.manifest, module = excluded.module, sha256 = excluded.sha256,
              updated_at = ${bumpedUpdatedAt(tx, 'wasm_tools')}
        RETURNING ${INFO_COLUMNS}`,
  );
  if (!row) throw new Error('wasm tool row missing after write');
  tx.changes.push(resourceChange(tenant, 'wasm_tool', name));
  return { tool: toWasmToolInfo(row), created: wasCreated(row) };
}

export function* getWasmTool(db: Reads, tenant: string, name: string): Op<WasmToolRecord | null> {
  const row = yield* db.one<WasmToolRow>(
    sql`SELECT * FROM wasm_tools WHERE tenant = ${tenant} AND name = ${name}`,
  );
  return row ? toWasmTool(row) : null;
}

export function* listWasmTools(db: Reads, tenant: string): Op<WasmToolInfo[]> {
  const rows = yield* db.rows<WasmToolInfoRow>(
    sql`SELECT ${INFO_COLUMNS} FROM wasm_tools WHERE tenant = ${tenant} ORDER BY name`,
  );
  return rows.map(toWasmToolInfo);
}

export function listWasmToolsPage(db: Reads, tenant: string, limit: number, cursor?: string) {
  return listByName(db, WASM_TOOL_LIST, toWasmToolInfo, { tenant, limit, cursor });
}

export function deleteWasmTool(tx: Writes, tenant: string, name: string): Op<boolean> {
  return deleteNamedRow(tx, 'wasm_tools', tenant, name, 'wasm_tool');
}
