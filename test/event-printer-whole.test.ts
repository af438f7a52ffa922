// The CLI's event printer (keel turn --stream, keel chat) and a `whole` model.delta — the
// call's whole text, which the SSE route sends a subscriber that missed the call's deltas
// (src/api/routes/events.ts): printed once, never appended to what is already shown.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventPrinter } from '../src/cli/event-printer.ts';
import type { StreamEvent } from '../src/events.ts';
import { sampleEvent } from './helpers/every-event.ts';

function print(events: StreamEvent[]): string {
  let out = '';
  const printer = new EventPrinter((text) => (out += text), { answerPrefix: '> ' });
  for (const event of events) printer.take(event);
  return out;
}

const succeeded = (reply: string): StreamEvent => {
  const event = sampleEvent('run.succeeded');
  return { ...event, data: { ...event.data, output: { reply } } };
};

const response = (text: string): StreamEvent => {
  const event = sampleEvent('model.response');
  return { ...event, data: { ...event.data, step: 1, text } };
};

describe('event printer × whole deltas', () => {
  it('a late subscriber: the whole text once, not again at the end', () => {
    const out = print([
      { type: 'model.delta', data: { step: 1, text: 'echo: hello there', whole: true } },
      response('echo: hello there'),
      succeeded('echo: hello there'),
    ]);
    assert.equal(out, '> echo: hello there\n');
  });

  it('after a reconnect: the part already shown is not printed twice', () => {
    const out = print([
      { type: 'model.delta', data: { step: 1, text: 'echo: he' } },
      { type: 'model.delta', data: { step: 1, text: 'echo: hello there', whole: true } },
      succeeded('echo: hello there'),
    ]);
    assert.equal(out, '> echo: hello there\n');
  });
});
