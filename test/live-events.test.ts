// Whether a run is watched live (src/runtime/live.ts): what a provider with
// `stream = "when-watched"` asks before each model request. In one process the answer is
// exact (a listener, or one a turn's submitter announced with `follow`); with a relay to
// other processes it cannot be known, so it is always yes.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LiveRelay } from '../src/runtime/live.ts';
import { createLiveEvents } from '../src/runtime/live.ts';

describe('live events: watched', () => {
  it('is true exactly while this process has a listener for the run', () => {
    const live = createLiveEvents();
    assert.equal(live.watched('run-1'), false);
    const first = live.subscribe('run-1', () => {});
    const second = live.subscribe('run-1', () => {});
    assert.equal(live.watched('run-1'), true);
    assert.equal(live.watched('run-2'), false, 'another run is not watched');
    first();
    assert.equal(live.watched('run-1'), true, 'one listener is left');
    second();
    assert.equal(live.watched('run-1'), false);
  });

  it('an expected listener makes the run watched until it subscribes or the wait runs out', () => {
    let clock = 0;
    const live = createLiveEvents({ now: () => clock });
    live.expect('run-1', 30_000);
    assert.equal(live.watched('run-1'), true, 'announced, not yet here');
    const off = live.subscribe('run-1', () => {});
    off();
    assert.equal(live.watched('run-1'), false, 'it came and left');

    live.expect('run-2', 30_000);
    clock = 29_999;
    assert.equal(live.watched('run-2'), true);
    clock = 30_000;
    assert.equal(live.watched('run-2'), false, 'it never came');
  });

  it('expired announcements are swept when the map has doubled, live ones kept', () => {
    let clock = 0;
    const live = createLiveEvents({ now: () => clock, expectedSweepAt: 4 });
    for (const id of ['a', 'b', 'c']) live.expect(id, 10);
    clock = 20; // a, b, c expired
    live.expect('d', 100);
    assert.equal(live.expecting(), 4, 'below the threshold nothing is swept');
    live.expect('e', 100); // 4 held: sweep → d; then e
    assert.equal(live.expecting(), 2);
    assert.equal(live.watched('d'), true);
    // The next sweep waits for max(4, 2 × the 1 kept) = 4 entries again.
    live.expect('f', 100);
    live.expect('g', 100);
    assert.equal(live.expecting(), 4);
    clock = 200; // all expired
    live.expect('h', 100);
    assert.equal(live.expecting(), 1, 'swept, then h');
  });

  it('with a relay nothing is remembered: every run is watched anyway', () => {
    const relay: LiveRelay = { send: () => {}, onMessage: () => () => {}, onDropped: () => {} };
    const live = createLiveEvents({ relay });
    live.expect('run-1', 30_000);
    assert.equal(live.expecting(), 0);
    assert.equal(live.watched('run-9'), true);
  });

  it('is always true with a relay: a listener may be in another process', () => {
    const relay: LiveRelay = { send: () => {}, onMessage: () => () => {}, onDropped: () => {} };
    const live = createLiveEvents({ relay });
    assert.equal(live.watched('run-1'), true);
  });
});
