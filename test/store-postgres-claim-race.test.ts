// The claim under contention: 8 claimers, each on its own store (its own pool and
// connection), race for 2 000 runs over 100 lanes. Every run is claimed exactly once,
// no lane ever has two holders, and each lane's runs are taken in FIFO order.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { agentSpec, succeeded, turn } from './store-conformance/harness.ts';
import { openPostgresStore } from '../src/store/postgres/index.ts';
import type { Store } from '../src/store/store.ts';
import {
  POSTGRES_URL,
  dropSchemas,
  freshSchemaName,
  skipUnlessPostgres,
} from './helpers/postgres.ts';

const CLAIMERS = 8;
const RUNS = 2000;
const LANES = 100;

const skip = await skipUnlessPostgres('test/store-postgres-claim-race.test.ts');

describe('claim race [postgres]', { skip }, () => {
  const schema = freshSchemaName('keel_race');
  const stores: Store[] = [];
  after(async () => {
    for (const store of stores.splice(0)) await store.close();
    await dropSchemas([schema]);
  });

  it(
    `${CLAIMERS} claimers on separate connections, ${RUNS} runs: zero double claims`,
    { timeout: 120_000 },
    async () => {
      for (let index = 0; index < CLAIMERS; index += 1) {
        stores.push(await openPostgresStore({ url: POSTGRES_URL, schema, poolSize: 1 }));
      }
      const [first] = stores as [Store];
      await first.createTenant('t1', {});
      await first.putAgent('t1', 'a1', agentSpec());
      const order = new Map<string, string[]>();
      // Enqueued round by round so each lane's FIFO order is known.
      for (let round = 0; round < RUNS / LANES; round += 1) {
        const enqueued = await Promise.all(
          Array.from({ length: LANES }, (_, lane) =>
            stores[lane % CLAIMERS]!.enqueueRun(turn({ scope: `lane-${lane}` })),
          ),
        );
        for (const { run } of enqueued)
          order.set(run.scope, [...(order.get(run.scope) ?? []), run.run_id]);
      }

      const claims = new Map<string, number>();
      const claimedOrder = new Map<string, string[]>();
      const holders = new Set<string>();
      let overlaps = 0;
      let empty = 0;
      const started = performance.now();
      await Promise.all(
        stores.map(async (store, index) => {
          for (;;) {
            const claimed = await store.claimNextRun({ owner: `c${index}`, lease_ms: 60_000 });
            if (!claimed) {
              // Nothing claimable right now can mean "all lanes busy": stop only when done.
              if (claims.size >= RUNS) return;
              empty += 1;
              await new Promise((resolve) => setTimeout(resolve, 2));
              continue;
            }
            const { run } = claimed;
            if (holders.has(run.scope)) overlaps += 1;
            holders.add(run.scope);
            claims.set(run.run_id, (claims.get(run.run_id) ?? 0) + 1);
            claimedOrder.set(run.scope, [...(claimedOrder.get(run.scope) ?? []), run.run_id]);
            holders.delete(run.scope);
            await store.finalizeRun({ run_id: run.run_id, attempt: run.attempt }, succeeded('ok'));
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      const doubles = [...claims.values()].filter((count) => count > 1).length;
      const fifoBreaks = [...order].filter(
        ([scope, ids]) => JSON.stringify(claimedOrder.get(scope)) !== JSON.stringify(ids),
      ).length;
      process.stdout.write(
        `claim-race[postgres] claimers=${CLAIMERS} runs=${RUNS} lanes=${LANES} claimed=${claims.size} double_claims=${doubles} lane_overlaps=${overlaps} fifo_breaks=${fifoBreaks} empty_polls=${empty} claims_per_s=${Math.round(RUNS / seconds)}\n`,
      );
      assert.equal(claims.size, RUNS);
      assert.equal(doubles, 0);
      assert.equal(overlaps, 0);
      assert.equal(fifoBreaks, 0);
    },
  );
});
