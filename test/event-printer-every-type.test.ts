// The CLI's event printer (keel turn --stream, keel chat, the demo) and the event union
// (src/events.ts): every type keel classifies is printed — under --verbose at least — so
// none is dropped silently, and a type this keel does not know (a newer server's) is
// shown under --verbose and skipped otherwise, never an error.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventPrinter, type PrintableEvent } from '../src/cli/event-printer.ts';
import { EVENT_ENDS_STREAM } from '../src/events.ts';
import { everyEventType, sampleEvent } from './helpers/every-event.ts';

function printed(event: PrintableEvent, verbose: boolean): string {
  let out = '';
  const printer = new EventPrinter((text) => (out += text), { verbose, runId: 'run_1' });
  printer.take(event);
  return out;
}

/** What a person following the answer sees without --verbose. */
const SHOWN = [
  'model.delta',
  'tool.call',
  'tool.result',
  'model.retry',
  'context.compacted',
  'memory.flushed',
  'approval.requested',
  'approval.decided',
  'run.resumed',
  'run.succeeded',
  'run.failed',
  'run.cancelled',
];

describe('event printer × every event type', () => {
  const types = everyEventType();

  it('has a sample of every type EVENT_ENDS_STREAM classifies', () => {
    assert.deepEqual(types, Object.keys(EVENT_ENDS_STREAM));
  });

  for (const type of types) {
    it(`prints ${type}`, () => {
      const verbose = printed(sampleEvent(type), true);
      assert.notEqual(verbose.trim(), '', `${type} printed nothing under --verbose`);
      const plain = printed(sampleEvent(type), false);
      if (SHOWN.includes(type)) assert.notEqual(plain.trim(), '', `${type} printed nothing`);
      else assert.equal(plain, '', `${type} is bookkeeping, shown under --verbose only`);
    });
  }

  it("prints a known type whose data lacks a field (another server version's) without throwing", () => {
    const lacking = (type: string, data: Record<string, unknown>) =>
      ({ type, seq: 1, ts: '2026-12-03T00:00:00.000Z', data }) as unknown as PrintableEvent;
    assert.match(printed(lacking('run.failed', {}), false), /✗ ERROR: \(no message\)/);
    assert.match(
      printed(lacking('model.retry', { attempt: 1, delay_ms: 5 }), false),
      /unknown error/,
    );
    assert.match(printed(lacking('memory.flushed', {}), false), /0 of 0 facts written/);
    assert.equal(printed(lacking('model.delta', { step: 1 }), false), '');
  });

  it('names the data of each printed type (not a generic line)', () => {
    assert.match(printed(sampleEvent('tool.call'), false), /→ clock_now/);
    assert.match(printed(sampleEvent('tool.result'), false), /← clock_now: \{"now":/);
    assert.match(printed(sampleEvent('model.retry'), false), /retry 1 in 500 ms: overloaded/);
    assert.match(printed(sampleEvent('run.failed'), false), /✗ RUN_TIMEOUT: the run took too long/);
    assert.match(printed(sampleEvent('approval.requested'), false), /approve run_1 c2/);
    assert.match(printed(sampleEvent('run.note'), true), /· run\.note \{"text":/);
  });

  it('a type this keel does not know: shown under --verbose, skipped otherwise', () => {
    // As it arrives from a newer server: parsed JSON, not a member of this keel's union.
    const future: PrintableEvent = JSON.parse('{"type":"some.future_type","data":{"x":1},"seq":3}');
    assert.equal(printed(future, true), '  · some.future_type {"x":1}\n');
    assert.equal(printed(future, false), '');
  });
});
