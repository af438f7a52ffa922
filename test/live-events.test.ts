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

  it('an expected listener makes the run watched until it subscribes or the wait runs out', async () => {
    const live = createLiveEvents();
    live.expect('run-1', 60_000);
    assert.equal(live.watched('run-1'), true, 'announced, not yet here');
    const off = live.subscribe('run-1', () => {});
    off();
    assert.equal(live.watched('run-1'), false, 'it came and left');

    live.expect('run-2', 20);
    assert.equal(live.watched('run-2'), true);
    await new Promise((resolve) => setTimeout(resolve, 40));
    assert.equal(live.watched('run-2'), false, 'it never came');
  });

  it('is always true with a relay: a listener may be in another process', () => {
    const relay: LiveRelay = { send: () => {}, onMessage: () => () => {}, onDropped: () => {} };
    const live = createLiveEvents({ relay });
    assert.equal(live.watched('run-1'), true);
  });
});
