// The run view's timeline line for each event (src/console/assets/views/event-summary.js,
// served as is and type-checked against src/events.ts by tsconfig.console.json): every
// stored type keel classifies gets a line of its own data, none is dropped to an empty
// row, and a type this console does not know yet shows its data as JSON.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TraceEvent } from '../src/events.ts';
import { everyEventType, sampleEvent } from './helpers/every-event.ts';

// The browser module, loaded as Node loads any ES module (it imports only format.js). Its
// signature is checked where it is written, by the console's own type check.
const MODULE = new URL('../src/console/assets/views/event-summary.js', import.meta.url).href;
const { eventSummary }: { eventSummary: (event: TraceEvent) => string } = await import(MODULE);

describe('console timeline × every event type', () => {
  // model.delta is live only: the view adds it to the step's streamed text, not a row.
  const stored = everyEventType().filter(
    (type): type is TraceEvent['type'] => type !== 'model.delta',
  );

  it('covers every type EVENT_ENDS_STREAM classifies but the live-only model.delta', () => {
    assert.equal(stored.length, everyEventType().length - 1);
  });

  for (const type of stored) {
    it(`shows ${type}`, () => {
      const line = eventSummary(sampleEvent(type));
      assert.equal(typeof line, 'string');
      assert.notEqual(line.trim(), '', `${type} has an empty timeline line`);
    });
  }

  it('names the data of the types it describes', () => {
    assert.equal(eventSummary(sampleEvent('model.request')), 'step 1 → fixture/echo');
    assert.equal(eventSummary(sampleEvent('run.failed')), 'RUN_TIMEOUT: the run took too long');
    assert.equal(eventSummary(sampleEvent('approval.decided')), 'c2 approved: fine');
    assert.match(eventSummary(sampleEvent('context.compacted')), /"tokens_before":3000/);
  });

  it('a type it does not know: its data as JSON', () => {
    const future: TraceEvent = JSON.parse(
      '{"type":"some.future_type","data":{"x":1},"seq":3,"ts":"2026-01-01T00:00:00.000Z"}',
    );
    assert.equal(eventSummary(future), '{"x":1}');
  });
});
