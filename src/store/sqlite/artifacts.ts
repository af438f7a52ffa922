// Artifacts: per-tenant byte blobs addressed by path, with content type, size, sha256
// and metadata. A write is one transaction; listings are keyset paged by path.

import { createHash } from 'node:crypto';
import type { Artifact, ArtifactStat } from '../../types.ts';
import type { ArtifactWrite, Page } from '../store.ts';
import type { StoreContext } from './context.ts';
import { decodeCursor, pageOf } from './rows.ts';
import type { ArtifactStatRow } from './rows.ts';
import { ARTIFACT_STAT_COLUMNS, toArtifactStat } from './rows.ts';
import { requireStorageQuota, requireTenant } from './guards.ts';

interface ArtifactRow extends ArtifactStatRow {
  body: Buffer;
}

function statRow(ctx: StoreContext, tenant: string, path: string): ArtifactStatRow | undefined {
  return ctx
    .sql(`SELECT ${ARTIFACT_STAT_COLUMNS} FROM artifacts WHERE tenant = ? AND path = ?`)
    .get(tenant, path) as ArtifactStatRow | undefined;
}

export function putArtifact(
  ctx: StoreContext,
  tenant: string,
  path: string,
  input: ArtifactWrite,
): { artifact: ArtifactStat; created: boolean } {
  const body = Buffer.from(input.body.buffer, input.body.byteOffset, input.body.byteLength);
  const sha256 = createHash('sha256').update(body).digest('hex');
  return ctx.write(() => {
    requireTenant(ctx, tenant);
    const existing = statRow(ctx, tenant, path);
    requireStorageQuota(
      ctx,
      tenant,
      'artifact_bytes',
      body.byteLength - (existing?.size_bytes ?? 0),
      input.max_bytes,
    );
    const now = ctx.now();
    if (existing) {
      ctx
        .sql(
          `UPDATE artifacts SET body = ?, content_type = ?, size_bytes = ?, sha256 = ?,
             metadata = ?, updated_at = ? WHERE tenant = ? AND path = ?`,
        )
        .run(
          body,
          input.content_type,
          body.byteLength,
          sha256,
          JSON.stringify(input.metadata),
          Math.max(now, existing.updated_at + 1),
          tenant,
          path,
        );
    } else {
      ctx
        .sql(
          `INSERT INTO artifacts (tenant, path, body, content_type, size_bytes, sha256, metadata,
             created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          tenant,
          path,
          body,
          input.content_type,
          body.byteLength,
          sha256,
          JSON.stringify(input.metadata),
          now,
          now,
        );
    }
    return {
      artifact: toArtifactStat(statRow(ctx, tenant, path) as ArtifactStatRow),
      created: !existing,
    };
  });
}

export function getArtifact(ctx: StoreContext, tenant: string, path: string): Artifact | null {
  const row = ctx
    .sql(`SELECT ${ARTIFACT_STAT_COLUMNS}, body FROM artifacts WHERE tenant = ? AND path = ?`)
    .get(tenant, path) as ArtifactRow | undefined;
  if (!row) return null;
  return { ...toArtifactStat(row), body: new Uint8Array(row.body) };
}

/** The smallest string greater than every string that starts with `prefix`. */
function prefixUpperBound(prefix: string): string {
  return `${prefix}\u{10FFFF}`;
}

export function listArtifacts(
  ctx: StoreContext,
  tenant: string,
  prefix: string,
  limit: number,
  cursor?: string,
): Page<ArtifactStat> {
  // A range on the primary key instead of LIKE: no escaping of % and _, and the
  // (tenant, path) index serves it. SQLite compares TEXT by bytes (BINARY collation).
  const after = cursor === undefined ? null : (decodeCursor(cursor, ['string'])[0] as string);
  const lower = after !== null && after >= prefix ? after : prefix;
  const strict = after !== null && after >= prefix;
  const rows = ctx
    .sql(
      `SELECT ${ARTIFACT_STAT_COLUMNS} FROM artifacts
       WHERE tenant = ? AND (path > ? OR (path = ? AND ? = 0)) AND path < ?
       ORDER BY path LIMIT CAST(? AS INTEGER)`,
    )
    .all(
      tenant,
      lower,
      lower,
      strict ? 1 : 0,
      prefixUpperBound(prefix),
      limit + 1,
    ) as ArtifactStatRow[];
  return pageOf(rows, limit, toArtifactStat, (row) => [row.path]);
}

export function deleteArtifact(ctx: StoreContext, tenant: string, path: string): boolean {
  return ctx.write(
    () =>
      ctx.sql('DELETE FROM artifacts WHERE tenant = ? AND path = ?').run(tenant, path).changes > 0,
  );
}
