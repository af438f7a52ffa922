// The delivery claim under contention on PostgreSQL: adapters in several processes (each
// store its own pool) claim the same tenant's due rows at once. Every row is handed out
// exactly once, and a row another transaction holds is skipped, not waited for (the
// claim's SKIP LOCKED, Dialect.skipsLocked).

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { agentSpec, succeeded, TENANT, turn } from './store-conformance/harness.ts';
import type { PostgresStore } from '../src/store/postgres/index.ts';
import { openPostgresStore } from '../src/store/postgres/index.ts';
import {
  POSTGRES_URL,
  dropSchemas,
  freshSchemaName,
  skipUnlessPostgres,
} from './helpers/postgres.ts';

const CLAIMERS = 4;
const DELIVERIES = 48;
const CLAIM = { limit: 5, lease_ms: 60_000, max_attempts: 5 };

const skip = await skipUnlessPostgres('test/store-postgres-delivery-claim-race.test.ts');

describe('delivery claim race [postgres]', { skip }, () => {
  const schemas: string[] = [];
  const stores: PostgresStore[] = [];
  after(async () => {
    for (const store of stores.splice(0)) await store.close();
    await dropSchemas(schemas);
  });

  /** `count` stores on one fresh schema, with `deliveries` result deliveries due. */
  async function outbox(count: number, deliveries: number): Promise<PostgresStore[]> {
    const schema = freshSchemaName('keel_outbox');
    schemas.push(schema);
    const opened: PostgresStore[] = [];
    for (let index = 0; index < count; index += 1) {
      opened.push(await openPostgresStore({ url: POSTGRES_URL, schema, poolSize: 2 }));
    }
    stores.push(...opened);
    const [first] = opened as [PostgresStore];
    await first.createTenant(TENANT, {});
    await first.putAgent(TENANT, 'a1', agentSpec());
    for (let index = 0; index < deliveries; index += 1) {
      await first.enqueueRun(
        turn({ scope: `s${index}`, delivery: { destination: `tg:${index}` } }),
      );
      const claimed = await first.claimNextRun({ owner: 'w', lease_ms: 60_000 });
      assert.ok(claimed);
      const fence = { run_id: claimed.run.run_id, attempt: claimed.run.attempt };
      await first.finalizeRun(fence, succeeded(`reply ${index}`));
    }
    return opened;
  }

  it(`${CLAIMERS} adapters on separate stores split ${DELIVERIES} due rows: each claimed once`, async () => {
    const claimers = await outbox(CLAIMERS, DELIVERIES);
    const claims = new Map<string, number>();
    await Promise.all(
      claimers.map(async (store) => {
        for (;;) {
          const claimed = await store.claimDeliveries(TENANT, CLAIM);
          if (claimed.length === 0) return;
          for (const row of claimed)
            claims.set(row.delivery_id, (claims.get(row.delivery_id) ?? 0) + 1);
        }
      }),
    );
    assert.equal(claims.size, DELIVERIES);
    assert.deepEqual(
      [...claims].filter(([, count]) => count > 1),
      [],
      'deliveries claimed twice',
    );
  });

  it('skips a due row another transaction holds instead of waiting for it', async () => {
    const [store] = (await outbox(1, 3)) as [PostgresStore];
    const all = (await store.listDeliveries(TENANT, {}, 10)).items;
    assert.equal(all.length, 3);
    const held = all[0]!.delivery_id;
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await client.query(`SET search_path = ${schemas.at(-1)}`);
      await client.query('BEGIN');
      await client.query('SELECT 1 FROM deliveries WHERE delivery_id = $1 FOR UPDATE', [held]);
      let timer: NodeJS.Timeout | undefined;
      const claimed = await Promise.race([
        store.claimDeliveries(TENANT, CLAIM),
        new Promise<'waited'>((resolve) => {
          timer = setTimeout(() => resolve('waited'), 5_000);
        }),
      ]);
      clearTimeout(timer);
      assert.notEqual(claimed, 'waited', 'the claim waited for the held row');
      assert.deepEqual(
        (claimed as { delivery_id: string }[]).map((row) => row.delivery_id).sort(),
        all
          .map((row) => row.delivery_id)
          .filter((id) => id !== held)
          .sort(),
      );
    } finally {
      await client.query('ROLLBACK');
      await client.end();
    }
    // Released, the held row is the next claim's.
    const next = await store.claimDeliveries(TENANT, CLAIM);
    assert.deepEqual(
      next.map((row) => row.delivery_id),
      [held],
    );
  });
});
