// Artifacts, for both backends: per-tenant byte blobs addressed by path, with content
// type, size, sha256 and metadata. A write is one transaction; listings are keyset
// paged by path.

import { createHash } from 'node:crypto';
import type { Artifact, ArtifactStat } from '../../types.ts';
import type { ArtifactStatRow } from '../rows.ts';
import { ARTIFACT_STAT_COLUMNS, decodeCursor, pageOf, toArtifactStat } from '../rows.ts';
import type { ArtifactWrite, Page } from '../store.ts';
import { limitOf, raw, sql } from '../sql/query.ts';
import type { Op, Reads, Writes } from '../sql/steps.ts';
import { requireStorageQuota, requireTenant } from './guards.ts';
import { bumpedUpdatedAt, wasCreated } from './upsert.ts';

const STAT_COLUMNS = raw(ARTIFACT_STAT_COLUMNS);

/**
 * The sha256 a body is stored under. Callers hash before opening the write: hashing up to
 * max_bytes inside it would hold the transaction (on PostgreSQL, a pooled connection in
 * BEGIN) for the whole hash.
 */
export function artifactDigest(body: Uint8Array): string {
  return createHash('sha256').update(body).digest('hex');
}

/** `sha256` is artifactDigest(input.body), computed before the write. */
export function* putArtifact(
  tx: Writes,
  tenant: string,
  path: string,
  input: ArtifactWrite,
  sha256: string,
): Op<{ artifact: ArtifactStat; created: boolean }> {
  const body = Buffer.from(input.body.buffer, input.body.byteOffset, input.body.byteLength);
  yield* requireTenant(tx, tenant);
  yield* requireStorageQuota(
    tx,
    tenant,
    'artifact_bytes',
    body.byteLength,
    function* () {
      const old = yield* tx.one<{ size_bytes: number }>(
        sql`SELECT size_bytes FROM artifacts WHERE tenant = ${tenant} AND path = ${path}`,
      );
      return old?.size_bytes ?? 0;
    },
    input.max_bytes,
  );
  const row = yield* tx.one<ArtifactStatRow>(
    sql`INSERT INTO artifacts (tenant, path, body, content_type, size_bytes, sha256, metadata,
          created_at, updated_at)
        VALUES (${tenant}, ${path}, ${body}, ${input.content_type}, ${body.byteLength}, ${sha256},
          ${JSON.stringify(input.metadata)}, ${tx.now}, ${tx.now})
        ON CONFLICT (tenant, path) DO UPDATE
          SET body = excluded.body, content_type = excluded.content_type,
              size_bytes = excluded.size_bytes, sha256 = excluded.sha256,
              metadata = excluded.metadata, updated_at = ${bumpedUpdatedAt(tx, 'artifacts')}
        RETURNING ${STAT_COLUMNS}`,
  );
  if (!row) throw new Error('artifact row missing after write');
  return { artifact: toArtifactStat(row), created: wasCreated(row) };
}

export function* getArtifact(db: Reads, tenant: string, path: string): Op<Artifact | null> {
  const row = yield* db.one<ArtifactStatRow & { body: Buffer }>(
    sql`SELECT ${STAT_COLUMNS}, body FROM artifacts WHERE tenant = ${tenant} AND path = ${path}`,
  );
  if (!row) return null;
  return { ...toArtifactStat(row), body: new Uint8Array(row.body) };
}

/** The smallest string greater than every string that starts with `prefix`. */
function prefixUpperBound(prefix: string): string {
  return `${prefix}\u{10FFFF}`;
}

export function* listArtifacts(
  db: Reads,
  tenant: string,
  prefix: string,
  limit: number,
  cursor?: string,
): Op<Page<ArtifactStat>> {
  // A range on the primary key instead of LIKE: no escaping of % and _, and the
  // (tenant, path) index serves it. Paths compare by bytes on both backends (SQLite's
  // BINARY collation, PostgreSQL's COLLATE "C" column), so the keyset order is one.
  const after = cursor === undefined ? null : (decodeCursor(cursor, ['string'])[0] as string);
  const from = after !== null && after >= prefix ? sql`path > ${after}` : sql`path >= ${prefix}`;
  const rows = yield* db.rows<ArtifactStatRow>(
    sql`SELECT ${STAT_COLUMNS} FROM artifacts
        WHERE tenant = ${tenant} AND ${from} AND path < ${prefixUpperBound(prefix)}
        ORDER BY path LIMIT ${limitOf(limit + 1)}`,
  );
  return pageOf(rows, limit, toArtifactStat, (row) => [row.path]);
}

export function* deleteArtifact(tx: Writes, tenant: string, path: string): Op<boolean> {
  const deleted = yield* tx.run(
    sql`DELETE FROM artifacts WHERE tenant = ${tenant} AND path = ${path}`,
  );
  return deleted > 0;
}
