// `npm run bench -- tenant-export`: what moving a tenant costs (docs/operations.md,
// "Moving a tenant"). A tenant is built through the HTTP API of a keel on SQLite — 400
// turns with one tool call each over 40 scopes, 1 000 memory facts with their vectors
// (hash embedder), 20 artifacts of 100 KB — then, in this process, without the CLI's
// start or the target's migration: the export (one read snapshot into JSON lines), the
// checks of every line, and the import in one transaction into a fresh PostgreSQL schema
// and into a fresh SQLite data dir.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createKeelClient } from '../src/client/index.ts';
import { openPostgresStore } from '../src/store/postgres/index.ts';
import type { ExportHeader } from '../src/store/rules/tenant-export.ts';
import { decodeDump, encodeEndLine, encodeRowLine } from '../src/store/rules/tenant-export.ts';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import { exportSqliteTenant } from '../src/store/sqlite/tenant-export.ts';
import { startTestKeel } from '../test/helpers/keel-server.ts';
import { dropSchemas, freshSchemaName, POSTGRES_URL } from '../test/helpers/postgres.ts';
import { formatTable, nowMs, writeResult } from './support.ts';

const TURNS = 400;
const SCOPES = 40;
const FACTS = 1000;
const ARTIFACTS = 20;
const ARTIFACT_BYTES = 100_000;

async function buildTenant(url: string): Promise<void> {
  const client = createKeelClient({ baseUrl: url });
  await client.tenants.create({ name: 'big' });
  await client.agents.put('big', 'helper', { model: 'fixture/echo' });
  await Promise.all(
    Array.from({ length: SCOPES }, async (_, scope) => {
      for (let turn = 0; turn < TURNS / SCOPES; turn += 1) {
        const submitted = await client.turns.submit('big', {
          agent: 'helper',
          scope: `s${scope}`,
          payload: { text: `turn ${turn} in scope ${scope}\n@call clock_now {}` },
        });
        await client.turns.wait('big', submitted.run_id, 60_000);
      }
    }),
  );
  for (let fact = 0; fact < FACTS; fact += 1) {
    await client.memory.put('big', 'notes', `f${fact}`, {
      text: `fact number ${fact} about owls and the weather ${fact * 7}`,
    });
  }
  const body = Buffer.alloc(ARTIFACT_BYTES, 7);
  for (let index = 0; index < ARTIFACTS; index += 1) {
    await client.artifacts.put('big', `files/${index}.bin`, body, 'application/octet-stream');
  }
}

export async function runTenantExportBench(): Promise<void> {
  const source = await startTestKeel({ toml: '[memory]\nembedder = "hash"\n' });
  const targetDir = mkdtempSync(join(tmpdir(), 'keel-bench-import-'));
  const schema = freshSchemaName('keel_bench_export');
  try {
    await buildTenant(source.url);
    const header: ExportHeader = {
      format: 'keel-tenant-export',
      version: 1,
      tenant: 'big',
      exported_at: new Date().toISOString(),
      keel_version: 'bench',
      source: 'sqlite',
      include_active: false,
    };
    const lines = [JSON.stringify(header)];
    let started = nowMs();
    const rows = exportSqliteTenant(
      source.config.store.url.slice('sqlite:'.length),
      { tenant: 'big', includeActive: false },
      (table, row) => lines.push(encodeRowLine(table, row)),
    );
    lines.push(encodeEndLine(rows));
    const exportMs = nowMs() - started;
    const fileBytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);

    started = nowMs();
    const dump = decodeDump(lines);
    const checkMs = nowMs() - started;

    const url = new URL(POSTGRES_URL);
    url.searchParams.set('schema', schema);
    const postgres = await openPostgresStore({ url: url.toString() });
    started = nowMs();
    await postgres.importTenant(dump);
    const postgresMs = nowMs() - started;
    await postgres.close();

    const sqlite = await openSqliteStore({
      path: join(targetDir, 'keel.db'),
      durability: 'full',
      readThreads: 0,
    });
    started = nowMs();
    await sqlite.importTenant(dump);
    const sqliteMs = nowMs() - started;
    await sqlite.close();

    const result = {
      rows,
      file_bytes: fileBytes,
      export_ms: Math.round(exportMs),
      check_ms: Math.round(checkMs),
      import_postgres_ms: Math.round(postgresMs),
      import_sqlite_ms: Math.round(sqliteMs),
    };
    console.log(`tenant export: ${TURNS} turns, ${FACTS} facts, ${ARTIFACTS} × 100 KB artifacts`);
    console.log(
      formatTable(
        ['rows', 'file MB', 'export ms', 'check ms', 'import pg ms', 'import sqlite ms'],
        [
          [
            rows,
            Math.round(fileBytes / 10_000) / 100,
            result.export_ms,
            result.check_ms,
            result.import_postgres_ms,
            result.import_sqlite_ms,
          ],
        ],
      ),
    );
    console.log(`wrote ${writeResult('tenant-export', result)}`);
  } finally {
    await source.close();
    rmSync(targetDir, { recursive: true, force: true });
    await dropSchemas([schema]);
  }
}
