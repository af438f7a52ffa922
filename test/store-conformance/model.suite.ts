// Model-based test: random sequences of enqueue / claim / heartbeat / append /
// finalize / cancel / clock moves on a few lanes, checked after every step against a
// tiny in-memory model of statuses, attempts, leases and lane occupancy.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { RunStatus } from '../../src/types.ts';
import type { Fence, Store } from '../../src/store/store.ts';
import type { StoreFactory } from './harness.ts';
import { agentSpec, AGENT, failed, succeeded, TENANT, TestClock, turn } from './harness.ts';

const LANES = ['l0', 'l1', 'l2'];
const LEASE = 1000;

type Command =
  | { kind: 'enqueue'; lane: number }
  | { kind: 'claim' }
  | { kind: 'heartbeat'; fence: number }
  | { kind: 'append'; fence: number }
  | { kind: 'finalize'; fence: number; ok: boolean }
  | { kind: 'cancel'; run: number }
  | { kind: 'tick'; ms: number };

// Weighted so that lanes fill up and claims meet busy lanes often.
const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('enqueue' as const),
      lane: fc.integer({ min: 0, max: LANES.length - 1 }),
    }),
  },
  { weight: 4, arbitrary: fc.constant({ kind: 'claim' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('heartbeat' as const), fence: fc.nat(20) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('append' as const), fence: fc.nat(20) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('finalize' as const),
      fence: fc.nat(20),
      ok: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), run: fc.nat(20) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('tick' as const),
      ms: fc.constantFrom(LEASE / 2, LEASE + 1),
    }),
  },
);

interface ModelRun {
  run_id: string;
  lane: string;
  status: RunStatus;
  attempt: number;
  lease_expires_at: number;
  entries: number;
}

class Model {
  readonly runs: ModelRun[] = [];
  readonly fences: Fence[] = [];

  holds(fence: Fence): ModelRun | undefined {
    const run = this.runs.find((candidate) => candidate.run_id === fence.run_id);
    return run && run.status === 'running' && run.attempt === fence.attempt ? run : undefined;
  }

  /** The run the store must claim next: oldest first among lane heads and expired leases. */
  nextClaim(now: number): ModelRun | undefined {
    return this.runs.find((run) => {
      if (run.status === 'running') return run.lease_expires_at <= now;
      if (run.status !== 'queued') return false;
      const laneRuns = this.runs.filter((other) => other.lane === run.lane);
      const laneBusy = laneRuns.some((other) => other.status === 'running');
      const head = laneRuns.find((other) => other.status === 'queued');
      return !laneBusy && head === run;
    });
  }
}

async function isLeaseLost(promise: Promise<unknown>): Promise<boolean> {
  try {
    await promise;
    return false;
  } catch (error) {
    if ((error as { code?: unknown }).code === 'LEASE_LOST') return true;
    throw error;
  }
}

async function step(store: Store, model: Model, clock: TestClock, command: Command): Promise<void> {
  switch (command.kind) {
    case 'enqueue': {
      const lane = LANES[command.lane] ?? 'l0';
      const { run } = await store.enqueueRun(turn({ scope: lane }));
      model.runs.push({
        run_id: run.run_id,
        lane,
        status: 'queued',
        attempt: 0,
        lease_expires_at: 0,
        entries: 0,
      });
      return;
    }
    case 'claim': {
      const expected = model.nextClaim(clock.now());
      const claimed = await store.claimNextRun({ owner: 'model', lease_ms: LEASE });
      assert.equal(claimed?.run.run_id, expected?.run_id);
      if (!expected || !claimed) return;
      expected.status = 'running';
      expected.attempt += 1;
      expected.lease_expires_at = clock.now() + LEASE;
      assert.equal(claimed.run.attempt, expected.attempt);
      model.fences.push({ run_id: expected.run_id, attempt: expected.attempt });
      return;
    }
    case 'heartbeat': {
      const fence = model.fences[command.fence % Math.max(1, model.fences.length)];
      if (!fence) return;
      const held = model.holds(fence);
      assert.equal(await store.heartbeat(fence, LEASE), held !== undefined);
      if (held) held.lease_expires_at = clock.now() + LEASE;
      return;
    }
    case 'append': {
      const fence = model.fences[command.fence % Math.max(1, model.fences.length)];
      if (!fence) return;
      const held = model.holds(fence);
      const lost = await isLeaseLost(
        store.appendProgress(fence, { entries: [{ kind: 'note', body: { text: 'n' } }] }),
      );
      assert.equal(lost, held === undefined);
      if (held) held.entries += 1;
      return;
    }
    case 'finalize': {
      const fence = model.fences[command.fence % Math.max(1, model.fences.length)];
      if (!fence) return;
      const held = model.holds(fence);
      const lost = await isLeaseLost(
        store.finalizeRun(fence, command.ok ? succeeded('ok') : failed()),
      );
      assert.equal(lost, held === undefined);
      if (held) held.status = command.ok ? 'succeeded' : 'failed';
      return;
    }
    case 'cancel': {
      const run = model.runs[command.run % Math.max(1, model.runs.length)];
      if (!run) return;
      if (run.status === 'queued' || run.status === 'running') run.status = 'cancelled';
      const result = await store.cancelRun(TENANT, run.run_id, null);
      assert.equal(result?.status, run.status);
      return;
    }
    case 'tick':
      clock.advance(command.ms);
      return;
  }
}

async function checkAgainstModel(store: Store, model: Model): Promise<void> {
  const running = new Set<string>();
  for (const expected of model.runs) {
    const run = await store.getRun(TENANT, expected.run_id);
    assert.equal(run?.status, expected.status, `status of ${expected.run_id}`);
    assert.equal(run?.attempt, expected.attempt);
    assert.equal((await store.loadEntries(expected.run_id)).length, expected.entries);
    if (expected.status === 'running') {
      assert.ok(!running.has(expected.lane), `two running runs in ${expected.lane}`);
      running.add(expected.lane);
    }
  }
}

export function modelSuite(factory: StoreFactory): void {
  describe('model-based: random command sequences', () => {
    it('the store agrees with the model after every command', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(commandArbitrary, { minLength: 5, maxLength: 50 }),
          async (commands) => {
            const clock = new TestClock();
            const store = await factory.open({ now: clock.now });
            try {
              await store.createTenant(TENANT, {});
              await store.putAgent(TENANT, AGENT, agentSpec());
              const model = new Model();
              for (const command of commands) {
                await step(store, model, clock, command);
                await checkAgainstModel(store, model);
              }
            } finally {
              await store.close();
              await factory.release?.([store]);
            }
          },
        ),
        { numRuns: 80 },
      );
    });
  });
}
