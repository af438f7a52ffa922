// The tenant export and import at the store (src/store/repositories/tenant-export.ts),
// on both backends: more memory facts than one insert batch (200 rows), with vectors of
// two dimensions and one fact without a vector, come back row for row and vector for
// vector; a row the store refuses in the middle of a batch is named by its line and
// nothing is written; an existing tenant is refused.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { isKeelError } from '../src/errors.ts';
import type { ExportRow, TenantDump } from '../src/store/rules/tenant-export.ts';
import type { PostgresStore } from '../src/store/postgres/index.ts';
import { exportPostgresTenant } from '../src/store/postgres/index.ts';
import type { SqliteStore } from '../src/store/sqlite/index.ts';
import { exportSqliteTenant } from '../src/store/sqlite/tenant-export.ts';
import type { Store } from '../src/store/store.ts';
import type { StoreFactory } from './store-conformance/harness.ts';
import { POSTGRES_URL, skipUnlessPostgres } from './helpers/postgres.ts';
import { postgresFactory, sqliteFactory } from './helpers/store-factories.ts';

const TENANT = 'mover';
const FACTS = 230;
const skipPg = await skipUnlessPostgres('tenant-import-store.test.ts');

type Row = { table: string; row: ExportRow };

async function exportRows(kind: string, store: Store): Promise<Row[]> {
  const rows: Row[] = [];
  const emit = (table: string, row: ExportRow) => rows.push({ table, row });
  const options = { tenant: TENANT, includeActive: false };
  if (kind === 'sqlite') exportSqliteTenant((store as SqliteStore).path, options, emit);
  else {
    const url = new URL(POSTGRES_URL);
    url.searchParams.set('schema', (store as PostgresStore).schema);
    await exportPostgresTenant(url.toString(), options, emit);
  }
  return rows;
}

function dumpOf(rows: readonly Row[]): TenantDump {
  return {
    header: { tenant: TENANT } as TenantDump['header'],
    rows: rows.map(({ table, row }, index) => ({ table, row: { ...row }, line: index + 2 })),
  };
}

function defineImportSuite(kind: 'sqlite' | 'postgres', factory: StoreFactory): void {
  describe(`tenant export and import at the store [${kind}]`, () => {
    after(() => factory.cleanup());

    it('brings back every row and vector, past one insert batch', async () => {
      const source = await factory.open();
      try {
        await source.createTenant(TENANT, { plan: 'x' });
        for (let i = 0; i < FACTS; i++) {
          const dim = i % 2 === 0 ? 3 : 4;
          const values = Float32Array.from({ length: dim }, (_, j) => (i + j) / 1000);
          await source.putMemory({
            tenant: TENANT,
            namespace: i % 3 === 0 ? 'a' : 'b',
            id: `fact-${String(i).padStart(3, '0')}`,
            text: `fact number ${i}`,
            metadata: { i },
            vector: { embedder: `e${dim}`, values },
          });
        }
        const rows = await exportRows(kind, source);
        const facts = rows.filter((row) => row.table === 'memory_facts');
        assert.equal(facts.length, FACTS);
        assert.ok(facts.every((fact) => fact.row.vector instanceof Buffer));

        const target = await factory.open();
        try {
          assert.equal(await target.importTenant(dumpOf(rows)), rows.length);
          assert.deepEqual(await exportRows(kind, target), rows);
          const hit = await target.searchMemorySemantic(
            TENANT,
            'b',
            { embedder: 'e4', values: Float32Array.from([1, 2, 3, 4], (v) => v / 1000) },
            1,
          );
          assert.equal(hit[0]?.id, 'fact-001');
          await assert.rejects(
            target.importTenant(dumpOf(rows)),
            (error: unknown) =>
              isKeelError(error, 'CONFLICT') && /already exists/.test(error.message),
          );
        } finally {
          await target.close();
        }

        // A duplicate fact in the middle of the second batch: named, nothing written.
        const duplicate = [...rows];
        const at = 1 + 150;
        duplicate.splice(at, 0, { ...(duplicate[at - 1] as Row) });
        const refused = await factory.open();
        try {
          await assert.rejects(
            refused.importTenant(dumpOf(duplicate)),
            (error: unknown) =>
              isKeelError(error, 'CONFLICT') &&
              error.message.startsWith(`line ${at + 2}: the store refused the memory_facts row`),
          );
          assert.equal(await refused.getTenant(TENANT), null);
        } finally {
          await refused.close();
        }
      } finally {
        await source.close();
      }
    });
  });
}

defineImportSuite('sqlite', sqliteFactory());
if (skipPg)
  describe('tenant export and import at the store [postgres]', { skip: skipPg }, () => {});
else defineImportSuite('postgres', postgresFactory('keel_import'));
