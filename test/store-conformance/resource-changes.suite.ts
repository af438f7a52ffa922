// `resource.changed` (src/store/rules/resource-changes.ts): every committed write of an
// agent, schedule, delivery, MCP server or WebAssembly tool reaches subscribers with
// the tenant, the kind and the name; a refused or empty write announces nothing.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ScheduleWrite, Store, StoreChange } from '../../src/store/store.ts';
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

function hourly(overrides: Partial<ScheduleWrite> = {}): ScheduleWrite {
  return {
    agent: AGENT,
    scope: 'cron',
    payload: { text: 'tick' },
    timing: { kind: 'every', every_ms: 3_600_000 },
    misfire: 'run_once',
    enabled: true,
    delivery: null,
    next_fire_at: new Date(Date.now() + 3_600_000).toISOString(),
    ...overrides,
  };
}

/** The resource changes `action` caused, as `resource:name` strings. */
async function heard(store: Store, action: () => Promise<unknown>): Promise<string[]> {
  const changes: StoreChange[] = [];
  const unsubscribe = store.subscribe((change) => changes.push(change));
  try {
    await action();
  } finally {
    unsubscribe();
  }
  return changes.flatMap((change) =>
    change.kind === 'resource.changed'
      ? [`${change.tenant}/${change.resource}:${change.name}${change.run_id ?? ''}`]
      : [],
  );
}

export function resourceChangesSuite(factory: StoreFactory): void {
  describe('resource changes', () => {
    const harness = new StoreHarness(factory);

    it('agents, schedules, MCP servers and WebAssembly tools announce writes and removals', async () => {
      const { store } = await harness.fresh();
      const t = TENANT;
      assert.deepEqual(await heard(store, () => store.putAgent(t, 'a2', agentSpec())), [
        `${t}/agent:a2`,
      ]);
      assert.deepEqual(await heard(store, () => store.putSchedule(t, 'h', hourly())), [
        `${t}/schedule:h`,
      ]);
      const mcp = { spec: { enabled: true }, tools: [], last_error: null };
      assert.deepEqual(await heard(store, () => store.putMcpServer(t, 'm', mcp)), [
        `${t}/mcp_server:m`,
      ]);
      assert.deepEqual(
        await heard(store, () => store.updateMcpServerDiscovery(t, 'm', { last_error: 'down' })),
        [`${t}/mcp_server:m`],
      );
      const wasm = { manifest: { effect: 'read_only' }, module: new Uint8Array([0, 97, 115, 109]) };
      assert.deepEqual(await heard(store, () => store.putWasmTool(t, 'w', wasm)), [
        `${t}/wasm_tool:w`,
      ]);
      assert.deepEqual(
        await heard(store, async () => {
          await store.deleteWasmTool(t, 'w');
          await store.deleteMcpServer(t, 'm');
          await store.deleteSchedule(t, 'h');
          await store.deleteAgent(t, 'a2');
        }),
        [`${t}/wasm_tool:w`, `${t}/mcp_server:m`, `${t}/schedule:h`, `${t}/agent:a2`],
      );
      // Nothing there, refused or rolled back: nothing announced.
      assert.deepEqual(
        await heard(store, async () => {
          await store.deleteWasmTool(t, 'w');
          await store.deleteMcpServer(t, 'm');
          await store.deleteSchedule(t, 'h');
          await store.deleteAgent(t, 'a2');
          await store.updateMcpServerDiscovery(t, 'm', { last_error: null });
          await rejectsWith(store.putAgent('nobody', 'x', agentSpec()), 'TENANT_NOT_FOUND');
          await rejectsWith(
            store.putSchedule(t, 'x', hourly({ agent: 'ghost' })),
            'AGENT_NOT_FOUND',
          );
          await rejectsWith(store.putWasmTool('nobody', 'x', wasm), 'TENANT_NOT_FOUND');
        }),
        [],
      );
    });

    it('a schedule fire and delivery claims, acks and retries announce themselves', async () => {
      const { store, clock } = await harness.fresh();
      const dueAt = new Date(clock.now()).toISOString();
      const { schedule } = await store.putSchedule(TENANT, 'tick', hourly({ next_fire_at: dueAt }));
      const fire = {
        mode: 'due' as const,
        tenant: TENANT,
        name: 'tick',
        revision: schedule.revision,
        expected_next_fire_at: dueAt,
        run: turn({ source: 'schedule', scope: 'cron', request_id: `schedule:tick:${dueAt}` }),
        next_fire_at: new Date(clock.now() + 3_600_000).toISOString(),
        note: null,
      };
      assert.deepEqual(await heard(store, () => store.fireSchedule(fire)), [
        `${TENANT}/schedule:tick`,
      ]);
      // The same fire again is stale: nothing changed, nothing announced.
      assert.deepEqual(await heard(store, () => store.fireSchedule(fire)), []);

      await store.enqueueRun(turn({ scope: 'd', delivery: { destination: 'test:x' } }));
      let claimed = await claimOrFail(store);
      while (claimed.run.scope !== 'd') {
        await store.finalizeRun(fenceOf(claimed), succeeded('tick'));
        claimed = await claimOrFail(store);
      }
      await store.finalizeRun(fenceOf(claimed), succeeded('ok'));
      const input = { limit: 10, lease_ms: 30_000, max_attempts: 1 };
      let delivery: { delivery_id: string; claim_token: string } | undefined;
      assert.deepEqual(
        await heard(store, async () => {
          [delivery] = await store.claimDeliveries(TENANT, input);
        }),
        [`${TENANT}/delivery:`],
      );
      assert.ok(delivery);
      const id = delivery.delivery_id;
      assert.deepEqual(await heard(store, () => store.claimDeliveries(TENANT, input)), []);
      assert.deepEqual(
        await heard(store, () =>
          store.ackDelivery(TENANT, id, {
            claim_token: delivery?.claim_token ?? '',
            outcome: 'retry',
            error: 'down',
            max_attempts: 1,
          }),
        ),
        [`${TENANT}/delivery:${id}`],
      );
      assert.deepEqual(await heard(store, () => store.retryDeadDelivery(TENANT, id)), [
        `${TENANT}/delivery:${id}`,
      ]);
      assert.deepEqual(
        await heard(store, () =>
          rejectsWith(store.retryDeadDelivery(TENANT, id), 'DELIVERY_NOT_DEAD'),
        ),
        [],
      );
    });
  });
}
