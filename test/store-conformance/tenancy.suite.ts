// Tenants, tokens, agents, tenant deletion, run listing, change notifications, stats.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StoreChange } from '../../src/store/store.ts';
import type { StoreFactory } from './harness.ts';
import {
  AGENT,
  agentSpec,
  claimOrFail,
  fenceOf,
  rejectsWith,
  StoreHarness,
  succeeded,
  TENANT,
  turn,
} from './harness.ts';

export function tenancySuite(factory: StoreFactory): void {
  describe('tenants, tokens and agents', () => {
    const harness = new StoreHarness(factory);

    it('creates a tenant once; a second create returns it unchanged', async () => {
      const { store } = await harness.fresh({ seed: false });
      const first = await store.createTenant('acme', { plan: 'free' });
      assert.equal(first.created, true);
      assert.deepEqual(first.tenant.metadata, { plan: 'free' });
      assert.match(first.tenant.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const second = await store.createTenant('acme', { plan: 'pro' });
      assert.equal(second.created, false);
      assert.deepEqual(second.tenant, first.tenant);
      assert.deepEqual(await store.getTenant('acme'), first.tenant);
      assert.equal(await store.getTenant('nobody'), null);
      await store.createTenant('beta', {});
      assert.deepEqual(
        (await store.listTenants()).map((tenant) => tenant.name),
        ['acme', 'beta'],
      );
    });

    it('updateTenant checks if_updated_at, and updated_at changes even within one millisecond', async () => {
      const { store } = await harness.fresh({ seed: false });
      const { tenant } = await store.createTenant('acme', {});
      const first = await store.updateTenant('acme', { v: 1 }, tenant.updated_at);
      assert.notEqual(first.updated_at, tenant.updated_at);
      assert.ok(first.updated_at > tenant.updated_at);
      await rejectsWith(store.updateTenant('acme', { v: 2 }, tenant.updated_at), 'CONFLICT');
      assert.deepEqual((await store.getTenant('acme'))?.metadata, { v: 1 });
      const second = await store.updateTenant('acme', { v: 3 });
      assert.ok(second.updated_at > first.updated_at);
      await rejectsWith(store.updateTenant('nobody', {}), 'TENANT_NOT_FOUND');
    });

    it('tokens: create, find, list, delete; an unknown tenant is rejected', async () => {
      const { store } = await harness.fresh();
      const created_at = new Date().toISOString();
      const record = await store.createToken({
        id: 'tok-1',
        tenant: TENANT,
        name: 'ci',
        created_at,
        hash: 'ab'.repeat(32),
      });
      assert.deepEqual(record, { id: 'tok-1', tenant: TENANT, name: 'ci', created_at });
      assert.deepEqual(await store.findToken('tok-1'), {
        id: 'tok-1',
        tenant: TENANT,
        hash: 'ab'.repeat(32),
      });
      assert.deepEqual(await store.listTokens(TENANT), [record]);
      assert.equal(await store.deleteToken('other', 'tok-1'), false);
      assert.equal(await store.deleteToken(TENANT, 'tok-1'), true);
      assert.equal(await store.findToken('tok-1'), null);
      await rejectsWith(
        store.createToken({ id: 'tok-2', tenant: 'nobody', name: 'x', created_at, hash: 'cd' }),
        'TENANT_NOT_FOUND',
      );
    });

    it('agents: create, replace, list, get; an unknown tenant is rejected', async () => {
      const { store } = await harness.fresh();
      const replaced = await store.putAgent(TENANT, AGENT, agentSpec({ persona: 'terse' }));
      assert.equal(replaced.created, false);
      assert.equal(replaced.agent.persona, 'terse');
      assert.equal(replaced.agent.tenant, TENANT);
      const added = await store.putAgent(TENANT, 'b-agent', agentSpec({ max_steps: 3 }));
      assert.equal(added.created, true);
      assert.deepEqual(await store.getAgent(TENANT, 'b-agent'), added.agent);
      assert.deepEqual(
        (await store.listAgents(TENANT, 50)).items.map((agent) => agent.name),
        [AGENT, 'b-agent'],
      );
      assert.equal(await store.getAgent(TENANT, 'nobody'), null);
      await rejectsWith(store.putAgent('nobody', AGENT, agentSpec()), 'TENANT_NOT_FOUND');
    });

    it('deleteTenant removes every resource of the tenant and wakes waiters of its active runs', async () => {
      const { store } = await harness.fresh();
      await store.createTenant('keep', {});
      await store.putAgent('keep', AGENT, agentSpec());
      await store.createToken({
        id: 'tok-del',
        tenant: TENANT,
        name: 'x',
        created_at: new Date().toISOString(),
        hash: 'ff',
      });
      await store.enqueueRun(turn({ delivery: { destination: 'tg:1' } }));
      const done = await claimOrFail(store);
      await store.finalizeRun(fenceOf(done), succeeded('ok'));
      const kept = await store.enqueueRun(turn({ tenant: 'keep' }));
      const queued = await store.enqueueRun(turn({ scope: 's2', request_id: 'r-1' }));
      const changes: StoreChange[] = [];
      const unsubscribe = store.subscribe((change) => changes.push(change));
      assert.equal(await store.deleteTenant(TENANT), true);
      unsubscribe();
      assert.ok(
        changes.some(
          (change) => change.kind === 'run.terminal' && change.run_id === queued.run.run_id,
        ),
      );
      assert.equal(await store.getTenant(TENANT), null);
      assert.equal(await store.getRun(TENANT, done.run.run_id), null);
      assert.equal(await store.getTrace(TENANT, done.run.run_id, 0, 10), null);
      assert.deepEqual(await store.loadEntries(done.run.run_id), []);
      assert.equal(await store.findToken('tok-del'), null);
      assert.deepEqual((await store.listAgents(TENANT, 50)).items, []);
      assert.equal(await store.getThread(TENANT, AGENT, 's1'), null);
      assert.equal((await store.listDeliveries(TENANT, {}, 10)).items.length, 0);
      assert.equal(await store.deleteTenant(TENANT), false);
      // Nothing of the other tenant moved, and the name starts over empty.
      assert.deepEqual(await store.getRun('keep', kept.run.run_id), kept.run);
      await store.createTenant(TENANT, {});
      await store.putAgent(TENANT, AGENT, agentSpec());
      assert.equal((await store.listRuns(TENANT, {}, 10)).items.length, 0);
      const reused = await store.enqueueRun(turn({ scope: 's2', request_id: 'r-1' }));
      assert.equal(reused.deduplicated, false);
      const stats = await store.stats();
      assert.equal(stats.deliveries_by_status.pending, 0);
      assert.equal(stats.runs_by_status.succeeded, 0);
      assert.equal(stats.runs_by_status.queued, 2);
    });
  });

  describe('listing, notifications and stats', () => {
    const harness = new StoreHarness(factory);

    it('listRuns pages newest first and covers every run exactly once, with filters', async () => {
      const { store } = await harness.fresh();
      const ids: string[] = [];
      for (let index = 0; index < 23; index += 1) {
        const { run } = await store.enqueueRun(turn({ scope: index % 2 === 0 ? 'even' : 'odd' }));
        ids.push(run.run_id);
      }
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await store.listRuns(TENANT, {}, 5, cursor);
        seen.push(...page.items.map((run) => run.run_id));
        cursor = page.next_cursor ?? undefined;
        pages += 1;
      } while (cursor);
      assert.equal(pages, 5);
      assert.deepEqual(seen, [...ids].reverse());
      const odd = await store.listRuns(TENANT, { scope: 'odd' }, 100);
      assert.equal(odd.items.length, 11);
      assert.equal(odd.next_cursor, null);
      assert.ok(odd.items.every((run) => run.scope === 'odd'));
      await claimOrFail(store);
      assert.equal((await store.listRuns(TENANT, { status: 'running' }, 100)).items.length, 1);
      assert.equal((await store.listRuns(TENANT, { source: 'schedule' }, 100)).items.length, 0);
      assert.equal((await store.listRuns(TENANT, { agent: 'other' }, 100)).items.length, 0);
      assert.equal((await store.listRuns('t2', {}, 100)).items.length, 0);
      await rejectsWith(store.listRuns(TENANT, {}, 5, 'not a cursor'), 'VALIDATION_FAILED');
      await rejectsWith(store.listDeliveries(TENANT, {}, 5, '!!'), 'VALIDATION_FAILED');
    });

    it('subscribers hear run.queued, run.event and run.terminal after commit, and nothing for a rollback', async () => {
      const { store, clock } = await harness.fresh();
      const peer = await harness.peer(store, clock);
      const changes: StoreChange[] = [];
      const visibleOnPeer: Promise<string | undefined>[] = [];
      const unsubscribe = store.subscribe((change) => {
        changes.push(change);
        // Another connection must already see what the notification announces.
        if (change.kind === 'run.terminal') {
          visibleOnPeer.push(peer.getRun(TENANT, change.run_id).then((run) => run?.status));
        }
      });
      store.subscribe(() => {
        throw new Error('a broken listener must not break the store');
      });
      const { run } = await store.enqueueRun(turn());
      await rejectsWith(store.enqueueRun(turn({ on_busy: 'reject' })), 'SCOPE_BUSY');
      const claimed = await claimOrFail(store);
      await store.appendProgress(fenceOf(claimed), {
        events: [{ type: 'run.note', data: { text: 'a' } }],
      });
      await store.finalizeRun(fenceOf(claimed), succeeded('ok'));
      unsubscribe();
      await store.enqueueRun(turn({ scope: 'after-unsubscribe' }));
      // Events in seq order, one run.queued, and the terminal change last.
      assert.deepEqual(
        changes.flatMap((change) => (change.kind === 'run.event' ? [change.seq] : [])),
        [1, 2, 3, 4],
      );
      assert.equal(changes.filter((change) => change.kind === 'run.queued').length, 1);
      assert.equal(changes.at(-1)?.kind, 'run.terminal');
      assert.equal(changes.filter((change) => change.kind === 'run.terminal').length, 1);
      assert.ok(
        changes.every((change) => change.run_id === run.run_id && change.tenant === TENANT),
      );
      assert.deepEqual(await Promise.all(visibleOnPeer), ['succeeded']);
    });

    it('stats count runs and deliveries by status', async () => {
      const { store } = await harness.fresh();
      await store.enqueueRun(turn({ delivery: { destination: 'tg:1' } }));
      await store.enqueueRun(turn({ scope: 's2' }));
      await store.enqueueRun(turn({ scope: 's3' }));
      const claimed = await claimOrFail(store);
      await store.finalizeRun(fenceOf(claimed), succeeded('ok'));
      await claimOrFail(store);
      const stats = await store.stats();
      assert.deepEqual(stats.runs_by_status, {
        queued: 1,
        running: 1,
        waiting: 0,
        succeeded: 1,
        failed: 0,
        cancelled: 0,
      });
      assert.deepEqual(stats.deliveries_by_status, {
        pending: 1,
        claimed: 0,
        delivered: 0,
        failed: 0,
        dead: 0,
      });
      await store.ping();
      const status = await store.migrationStatus();
      assert.equal(status.current, status.latest);
      assert.ok(status.latest >= 1);
    });
  });
}
