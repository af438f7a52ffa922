// PostgreSQL-only guarantees: the settings keel asserts at open, migrations recorded
// per schema (and applied once when several processes start together), a schema
// written by a newer keel refused, notifications crossing connections (they also wake a
// waiting delivery claim), and the claim
// statement using its partial indexes.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { agentSpec, turn } from './store-conformance/harness.ts';
import type { PostgresStore } from '../src/store/postgres/index.ts';
import { openPostgresStore } from '../src/store/postgres/index.ts';
import type { StoreChange } from '../src/store/store.ts';
import { claimDeliveriesWaiting } from '../src/runtime/delivery-wait.ts';
import { emptyUsage } from '../src/types.ts';
import {
  POSTGRES_URL,
  dropSchemas,
  freshSchemaName,
  skipUnlessPostgres,
} from './helpers/postgres.ts';

const skip = await skipUnlessPostgres('test/store-postgres-specific.test.ts');

describe('postgres store specifics', { skip }, () => {
  const schemas: string[] = [];
  const stores: PostgresStore[] = [];
  const open = async (schema?: string): Promise<PostgresStore> => {
    const name = schema ?? freshSchemaName('keel_spec');
    if (!schemas.includes(name)) schemas.push(name);
    const store = await openPostgresStore({ url: POSTGRES_URL, schema: name, poolSize: 2 });
    stores.push(store);
    return store;
  };
  after(async () => {
    for (const store of stores.splice(0)) await store.close();
    await dropSchemas(schemas);
  });

  it('asserts synchronous_commit=on and READ COMMITTED, and reports them', async () => {
    const store = await open();
    assert.equal(store.features.synchronous_commit, 'on');
    assert.equal(store.features.transaction_isolation, 'read committed');
    assert.match(store.description, /synchronous_commit=on/);
    assert.doesNotMatch(store.description, /password/);
  });

  it('records migrations in its own schema; concurrent openers apply each once', async () => {
    const schema = freshSchemaName('keel_spec');
    await Promise.all([open(schema), open(schema), open(schema)]);
    const status = await stores.at(-1)!.migrationStatus();
    assert.equal(status.current, status.latest);
    const rows = await stores
      .at(-1)!
      .pool.query(`SELECT version, name FROM "${schema}".schema_migrations ORDER BY version`);
    assert.deepEqual(
      rows.rows.map((row: { version: number }) => row.version),
      Array.from({ length: status.latest }, (_, index) => index + 1),
    );
  });

  it('refuses a schema written by a newer keel with STORE_SCHEMA_NEWER', async () => {
    const store = await open();
    await store.pool.query(
      `INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)`,
    );
    await assert.rejects(openPostgresStore({ url: POSTGRES_URL, schema: store.schema }), {
      code: 'STORE_SCHEMA_NEWER',
    });
  });

  it('delivers changes to subscribers of another store through LISTEN/NOTIFY', async () => {
    const store = await open();
    const peer = await open(store.schema);
    await store.createTenant('t1', {});
    await store.putAgent('t1', 'a1', agentSpec());
    const heard: StoreChange[] = [];
    const queued = new Promise<void>((resolve) => {
      peer.subscribe((change) => {
        heard.push(change);
        if (change.kind === 'run.queued') resolve();
      });
    });
    const { run } = await store.enqueueRun(turn({ tenant: 't1', agent: 'a1' }));
    await queued;
    assert.ok(heard.some((change) => change.kind === 'run.queued' && change.run_id === run.run_id));
  });

  it('delivers resource changes (agents, wasm tools) to another store through LISTEN/NOTIFY', async () => {
    const store = await open();
    const peer = await open(store.schema);
    await store.createTenant('t1', {});
    const heard: StoreChange[] = [];
    const removed = new Promise<void>((resolve) => {
      peer.subscribe((change) => {
        if (change.kind !== 'resource.changed') return;
        heard.push(change);
        if (change.resource === 'wasm_tool') resolve();
      });
    });
    await store.putAgent('t1', 'a1', agentSpec());
    const wasm = { manifest: {}, module: new Uint8Array([0, 97, 115, 109]) };
    await store.putWasmTool('t1', 'w', wasm);
    await removed;
    assert.deepEqual(heard, [
      { kind: 'resource.changed', tenant: 't1', run_id: null, resource: 'agent', name: 'a1' },
      { kind: 'resource.changed', tenant: 't1', run_id: null, resource: 'wasm_tool', name: 'w' },
    ]);
  });

  it('a waiting delivery claim on another store is woken by the finalize notification', async () => {
    const store = await open();
    const peer = await open(store.schema);
    const due: StoreChange[] = [];
    peer.subscribe((change) => {
      if (change.kind === 'delivery.due') due.push(change);
    });
    await store.createTenant('t1', {});
    await store.putAgent('t1', 'a1', agentSpec());
    const input = { limit: 10, lease_ms: 60_000, destination_prefix: 'tg:', max_attempts: 5 };
    // Re-check interval and wait both a minute: only the notification can end it sooner.
    const waiting = claimDeliveriesWaiting(peer, 't1', input, 60_000, undefined, 60_000);
    const { run } = await store.enqueueRun(
      turn({ tenant: 't1', agent: 'a1', delivery: { destination: 'tg:5' } }),
    );
    const claimed = await store.claimNextRun({ owner: 'w', lease_ms: 30_000 });
    assert.equal(claimed?.run.run_id, run.run_id);
    await store.finalizeRun(
      { run_id: run.run_id, attempt: claimed.run.attempt },
      {
        status: 'succeeded',
        output: { reply: 'hi' },
        reply_text: 'hi',
        steps: 1,
        usage: emptyUsage(),
        elapsed_ms: 1,
        context_window: 20,
      },
    );
    const deliveries = await waiting;
    assert.equal(deliveries.length, 1);
    assert.equal(deliveries[0]?.run_id, run.run_id);
    // The notification names the destination (the webhook worker wakes only for its own).
    assert.deepEqual(due, [
      { kind: 'delivery.due', tenant: 't1', run_id: run.run_id, destination: 'tg:5' },
    ]);
  });

  it('prepares each parameterised statement once per connection and reuses it', async () => {
    const name = freshSchemaName('keel_spec');
    schemas.push(name);
    const store = await openPostgresStore({ url: POSTGRES_URL, schema: name, poolSize: 1 });
    stores.push(store);
    await store.createTenant('t1', {});
    await store.putAgent('t1', 'a1', agentSpec());
    const prepared = async (): Promise<number> =>
      Number(
        (
          await store.pool.query(
            "SELECT count(*) AS n FROM pg_prepared_statements WHERE name LIKE 'keel\\_%'",
          )
        ).rows[0].n,
      );
    await store.enqueueRun(turn({ tenant: 't1', agent: 'a1', scope: 's1' }));
    const afterOne = await prepared();
    assert.ok(afterOne > 0, 'the enqueue left named prepared statements on the connection');
    await store.enqueueRun(turn({ tenant: 't1', agent: 'a1', scope: 's2' }));
    await store.enqueueRun(turn({ tenant: 't1', agent: 'a1', scope: 's3' }));
    assert.equal(await prepared(), afterOne, 'the same statements again: none prepared anew');
  });

  it('the claim statement runs on the partial indexes (EXPLAIN)', async () => {
    const store = await open();
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await client.query(`SET search_path TO "${store.schema}"`);
      const { CLAIM_SQL } = await import('../src/store/postgres/index.ts');
      const plan = await client.query(`EXPLAIN ${CLAIM_SQL}`, ['w', 1000, Date.now(), 4, 0]);
      const text = plan.rows.map((row: Record<string, string>) => Object.values(row)[0]).join('\n');
      assert.match(
        text,
        /runs_queued_by_tenant|runs_queue|runs_lane_queued|runs_one_running_per_lane|runs_leases/,
      );
    } finally {
      await client.end();
    }
  });
});
