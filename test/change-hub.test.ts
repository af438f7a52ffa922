// The in-process change hub (src/store/rules/change-hub.ts): a listener that watches one
// run hears that run's changes and the run-less ones, and nothing of other runs — a
// change reaches its run's waiters, not every waiter in flight.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChangeHub } from '../src/store/rules/change-hub.ts';
import type { StoreChange } from '../src/store/store.ts';

const event = (runId: string, seq: number): StoreChange => ({
  kind: 'run.event',
  tenant: 't',
  run_id: runId,
  seq,
});
const RESYNC: StoreChange = { kind: 'store.resync', tenant: null, run_id: null };

describe('change hub', () => {
  it("calls a run's watchers for its changes and run-less ones, every-change listeners for all", () => {
    const hub = new ChangeHub();
    const heard = new Map<string, string[]>();
    const record = (name: string) => (change: StoreChange) =>
      heard.set(name, [...(heard.get(name) ?? []), `${change.kind}:${change.run_id}`]);
    hub.subscribe(record('all'));
    hub.subscribe(record('r1'), 'r1');
    hub.subscribe(record('r1 again'), 'r1');
    hub.subscribe(record('r2'), 'r2');
    hub.notify([event('r1', 1), event('r3', 1), RESYNC, event('r2', 1)]);
    assert.deepEqual(heard.get('all'), [
      'run.event:r1',
      'run.event:r3',
      'store.resync:null',
      'run.event:r2',
    ]);
    assert.deepEqual(heard.get('r1'), ['run.event:r1', 'store.resync:null']);
    assert.deepEqual(heard.get('r1 again'), ['run.event:r1', 'store.resync:null']);
    assert.deepEqual(heard.get('r2'), ['store.resync:null', 'run.event:r2']);
  });

  it('reaches one waiter of a thousand with a change of its run', () => {
    const hub = new ChangeHub();
    let calls = 0;
    for (let index = 0; index < 1000; index++) hub.subscribe(() => (calls += 1), `run-${index}`);
    hub.notify([event('run-7', 1), event('run-7', 2)]);
    assert.equal(calls, 2);
  });

  it('stops calling after unsubscribe, survives a throwing listener, and lets a listener unsubscribe itself', () => {
    const hub = new ChangeHub();
    const heard: string[] = [];
    const stopA = hub.subscribe(() => heard.push('a'), 'r1');
    hub.subscribe(() => {
      throw new Error('listener failure');
    }, 'r1');
    const stopSelf: () => void = hub.subscribe(() => {
      heard.push('self');
      stopSelf();
    }, 'r1');
    hub.subscribe(() => heard.push('b'), 'r1');
    hub.notify([event('r1', 1)]);
    assert.deepEqual(heard, ['a', 'self', 'b']);
    stopA();
    hub.notify([event('r1', 2)]);
    assert.deepEqual(heard, ['a', 'self', 'b', 'b']);
    hub.clear();
    hub.notify([event('r1', 3), RESYNC]);
    assert.deepEqual(heard, ['a', 'self', 'b', 'b']);
  });
});
