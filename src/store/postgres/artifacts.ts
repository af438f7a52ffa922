// Artifacts: per-tenant byte blobs (bytea) addressed by path, with content type, size,
// sha256 and metadata. A write is one transaction; listings are keyset paged by path.

import { createHash } from 'node:crypto';
import type { Artifact, ArtifactStat } from '../../types.ts';
import type { ArtifactWrite, Page } from '../store.ts';
import type { PgContext, Sql } from './context.ts';
import { decodeCursor, pageOf } from './rows.ts';
import type { ArtifactStatRow } from './rows.ts';
import { ARTIFACT_STAT_COLUMNS, toArtifactStat } from './rows.ts';
import { requireStorageQuota, requireTenant } from './guards.ts';

export async function putArtifact(
  ctx: PgContext,
  tenant: string,
  path: string,
  input: ArtifactWrite,
): Promise<{ artifact: ArtifactStat; created: boolean }> {
  const body = Buffer.from(input.body.buffer, input.body.byteOffset, input.body.byteLength);
  const sha256 = createHash('sha256').update(body).digest('hex');
  return ctx.write(async (tx) => {
    await requireTenant(tx, tenant);
    await requireStorageQuota(
      tx,
      tenant,
      'artifact_bytes',
      body.byteLength,
      async () =>
        (
          await tx.one<{ size_bytes: number }>(
            'SELECT size_bytes FROM artifacts WHERE tenant = $1 AND path = $2',
            [tenant, path],
          )
        )?.size_bytes ?? 0,
      input.max_bytes,
    );
    const values = [
      body,
      input.content_type,
      body.byteLength,
      sha256,
      JSON.stringify(input.metadata),
    ];
    const inserted = await tx.one<ArtifactStatRow>(
      `INSERT INTO artifacts (body, content_type, size_bytes, sha256, metadata, tenant, path,
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
       ON CONFLICT (tenant, path) DO NOTHING RETURNING ${ARTIFACT_STAT_COLUMNS}`,
      [...values, tenant, path, tx.now],
    );
    if (inserted) return { artifact: toArtifactStat(inserted), created: true };
    const updated = await tx.one<ArtifactStatRow>(
      `UPDATE artifacts SET body = $1, content_type = $2, size_bytes = $3, sha256 = $4,
         metadata = $5, updated_at = GREATEST($8, updated_at + 1)
       WHERE tenant = $6 AND path = $7 RETURNING ${ARTIFACT_STAT_COLUMNS}`,
      [...values, tenant, path, tx.now],
    );
    return { artifact: toArtifactStat(updated as ArtifactStatRow), created: false };
  });
}

export async function getArtifact(
  sql: Sql,
  tenant: string,
  path: string,
): Promise<Artifact | null> {
  const row = await sql.one<ArtifactStatRow & { body: Buffer }>(
    `SELECT ${ARTIFACT_STAT_COLUMNS}, body FROM artifacts WHERE tenant = $1 AND path = $2`,
    [tenant, path],
  );
  if (!row) return null;
  return { ...toArtifactStat(row), body: new Uint8Array(row.body) };
}

export async function listArtifacts(
  sql: Sql,
  tenant: string,
  prefix: string,
  limit: number,
  cursor?: string,
): Promise<Page<ArtifactStat>> {
  // starts_with() instead of LIKE: no escaping of % and _; paths compare by bytes
  // (COLLATE "C"), so the keyset order matches SQLite's.
  const after = cursor === undefined ? null : (decodeCursor(cursor, ['string'])[0] as string);
  const rows = await sql.rows<ArtifactStatRow>(
    `SELECT ${ARTIFACT_STAT_COLUMNS} FROM artifacts
     WHERE tenant = $1 AND starts_with(path, $2) AND ($3::text IS NULL OR path > $3)
     ORDER BY path LIMIT $4`,
    [tenant, prefix, after, limit + 1],
  );
  return pageOf(rows, limit, toArtifactStat, (row) => [row.path]);
}

export async function deleteArtifact(
  ctx: PgContext,
  tenant: string,
  path: string,
): Promise<boolean> {
  return ctx.write(
    async (tx) =>
      (await tx.count('DELETE FROM artifacts WHERE tenant = $1 AND path = $2', [tenant, path])) > 0,
  );
}
