// The rule `keel export --include-active` applies on PostgreSQL (src/store/rules/
// tenant-export.ts, sourceInUseRefusal): refused while a run's lease has not expired or a
// scheduler beat within SCHEDULER_STALE_MS. The real-PostgreSQL case is in
// test/tenant-export.test.ts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SCHEDULER_STALE_MS } from '../src/schedules/scheduler-watch.ts';
import { sourceInUseRefusal } from '../src/store/rules/tenant-export.ts';

const NOW = Date.UTC(2026, 11, 3, 7, 0, 0);

describe('sourceInUseRefusal', () => {
  it('allows a store where leases have expired and no scheduler beats', () => {
    const quiet = sourceInUseRefusal('alice', {
      now: NOW,
      running: [
        { run_id: 'r1', lease_expires_at: NOW },
        { run_id: 'r2', lease_expires_at: null },
      ],
      lastBeat: { holder: 'h:1', beat_at: NOW - SCHEDULER_STALE_MS - 1 },
    });
    assert.equal(quiet, null);
    assert.equal(sourceInUseRefusal('alice', { now: NOW, running: [], lastBeat: null }), null);
  });

  it('refuses a run leased until later, naming it and the lease', () => {
    const refusal = sourceInUseRefusal('alice', {
      now: NOW,
      running: [
        { run_id: 'r1', lease_expires_at: NOW + 1 },
        { run_id: 'r2', lease_expires_at: NOW - 1 },
      ],
      lastBeat: null,
    });
    assert.ok(refusal);
    assert.equal(refusal.code, 'CONFLICT');
    assert.match(
      refusal.message,
      /1 run\(s\) of tenant alice held by a worker \(r1; leased until 2026-12-03T07:00:00\.001Z\)/,
    );
    assert.doesNotMatch(refusal.message, /r2|scheduler/);
  });

  it('refuses while a scheduler beat recently, though no run is held', () => {
    const refusal = sourceInUseRefusal('alice', {
      now: NOW,
      running: [],
      lastBeat: { holder: 'h:42', beat_at: NOW - SCHEDULER_STALE_MS },
    });
    assert.ok(refusal);
    assert.equal(refusal.code, 'CONFLICT');
    assert.match(refusal.message, /a scheduler beat 15 s ago \(h:42; stale after 15 s\)/);
  });
});
