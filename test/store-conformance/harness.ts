// What every conformance file shares: the backend factory, a controllable clock, and
// builders for tenants, agents, turns and finalization inputs. Only the Store
// interface is used here, so a new backend runs the suite unchanged.

import { afterEach } from 'node:test';
import { newRunId } from '../../src/ids.ts';
import { agentSpec } from '../helpers/agent-spec.ts';
import type { RunErrorCode } from '../../src/errors.ts';
import type { DeliveryRequest, JsonObject, Usage } from '../../src/types.ts';
import type { ClaimedRun, EnqueueRunInput, FinalizeInput, Store } from '../../src/store/store.ts';

export interface StoreOpenOptions {
  /** The store's millisecond clock (leases, due times, timestamps). */
  now?: () => number;
}

/** How the suite gets stores of one backend. */
export interface StoreFactory {
  /** A store on a fresh, empty, migrated database. */
  open(options?: StoreOpenOptions): Promise<Store>;
  /** A second, separate connection to the database of `primary` (which stays open). */
  openPeer(primary: Store, options?: StoreOpenOptions): Promise<Store>;
  /** The database of `closed` (already closed) opened again: a process restart. */
  reopen(closed: Store, options?: StoreOpenOptions): Promise<Store>;
  /** Removes everything the factory created; called once after the whole suite. */
  cleanup(): Promise<void>;
  /**
   * Optional: the test is done with the databases of these stores (all closed now), so
   * the factory may empty one and hand it out again from open() — cheaper than
   * migrating a new one. open() must still return a database indistinguishable from a
   * fresh one.
   */
  release?(closed: readonly Store[]): Promise<void>;
}

/** A clock that moves only when told to, so lease and due-time tests never sleep. */
export class TestClock {
  private current: number;
  constructor(start: number = Date.now()) {
    this.current = start;
  }
  readonly now = (): number => this.current;
  advance(ms: number): void {
    this.current += ms;
  }
}

export const TENANT = 't1';
export const AGENT = 'a1';

export { agentSpec };

export function usage(modelCalls = 1): Usage {
  return { input_tokens: 10, output_tokens: 5, model_calls: modelCalls, tool_calls: 0 };
}

function fingerprintOf(input: {
  agent: string;
  scope: string;
  input: JsonObject;
  delivery: DeliveryRequest | null;
}): string {
  return JSON.stringify([input.agent, input.scope, input.input, input.delivery]);
}

export function turn(overrides: Partial<EnqueueRunInput> = {}): EnqueueRunInput {
  const base = {
    run_id: newRunId(),
    tenant: TENANT,
    agent: AGENT,
    scope: 's1',
    source: 'api' as const,
    input: { text: 'hello' },
    request_id: null,
    delivery: null,
    on_busy: 'enqueue' as const,
    ...overrides,
  };
  return { fingerprint: fingerprintOf(base), ...base };
}

export function succeeded(reply: string, extra: Partial<FinalizeInput> = {}): FinalizeInput {
  return {
    status: 'succeeded',
    output: { reply },
    reply_text: reply,
    steps: 1,
    usage: usage(),
    elapsed_ms: 5,
    context_window: 20,
    ...extra,
  } as FinalizeInput;
}

export function failed(code: RunErrorCode = 'PROVIDER_ERROR'): FinalizeInput {
  return {
    status: 'failed',
    error: { code, message: `failed with ${code}` },
    steps: 1,
    usage: usage(),
    elapsed_ms: 5,
  };
}

export function fenceOf(claimed: ClaimedRun): { run_id: string; attempt: number } {
  return { run_id: claimed.run.run_id, attempt: claimed.run.attempt };
}

export const LEASE_MS = 1000;

/** Per-test store lifecycle: everything a test opened is closed (and released) after it. */
export class StoreHarness {
  private readonly opened: Store[] = [];
  constructor(readonly factory: StoreFactory) {
    afterEach(async () => {
      const stores = this.opened.splice(0);
      for (const store of stores) await store.close();
      await factory.release?.(stores);
    });
  }

  /** A fresh database with tenant t1 and agent a1, on its own clock. */
  async fresh(options: { seed?: boolean } = {}): Promise<{ store: Store; clock: TestClock }> {
    const clock = new TestClock();
    const store = await this.factory.open({ now: clock.now });
    this.opened.push(store);
    if (options.seed !== false) {
      await store.createTenant(TENANT, {});
      await store.putAgent(TENANT, AGENT, agentSpec());
    }
    return { store, clock };
  }

  async peer(primary: Store, clock: TestClock): Promise<Store> {
    const store = await this.factory.openPeer(primary, { now: clock.now });
    this.opened.push(store);
    return store;
  }

  async reopen(closed: Store, clock: TestClock): Promise<Store> {
    const store = await this.factory.reopen(closed, { now: clock.now });
    this.opened.push(store);
    return store;
  }
}

export async function claimOrFail(store: Store, owner = 'w1'): Promise<ClaimedRun> {
  const claimed = await store.claimNextRun({ owner, lease_ms: LEASE_MS });
  if (!claimed) throw new Error('expected a claimable run');
  return claimed;
}

/** Asserts that `promise` rejects with a KeelError of `code` (checked by code only). */
export async function rejectsWith(promise: Promise<unknown>, code: string): Promise<void> {
  try {
    await promise;
  } catch (error) {
    const actual = (error as { code?: unknown }).code;
    if (actual !== code) {
      throw new Error(`expected ${code}, got ${String(actual)}: ${(error as Error).message}`);
    }
    return;
  }
  throw new Error(`expected ${code}, but it resolved`);
}
