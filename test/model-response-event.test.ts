// The model.response event's stored text: the provider's raw exchange (JSON texts) is
// spliced into the stored data as `raw`, as it came, so reading the event back gives
// the data (with whatever was added to it, e.g. trace ids) plus `raw: {request,
// response}` as values.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRawExchange, modelResponseEvent } from '../src/runtime/model-response-event.ts';
import { eventDataText } from '../src/store/rules/run-writes.ts';

const DATA = {
  step: 2,
  usage: { input_tokens: 10, output_tokens: 3 },
  model: 'local/m',
  cost_usd: 0,
  latency_ms: 12,
  finish_reason: 'stop',
};

describe('model.response event', () => {
  it('splices the raw request and response texts into the stored data', () => {
    const sent = '{"model":"m","messages":[{"role":"user","content":"hi \\"there\\""}],"n":1.50}';
    const event = modelResponseEvent(DATA, {
      request: sent,
      response: JSON.stringify('data: {"id":"x"}\n\n'),
    });
    assert.equal(event.data, DATA);
    const stored = eventDataText(event);
    assert.ok(stored.includes(sent), 'the request text is kept byte for byte');
    assert.deepEqual(JSON.parse(stored), {
      ...DATA,
      raw: {
        request: { model: 'm', messages: [{ role: 'user', content: 'hi "there"' }], n: 1.5 },
        response: 'data: {"id":"x"}\n\n',
      },
    });
  });

  it('keeps what is added to the data later (the tracer stamps trace and span ids)', () => {
    const event = modelResponseEvent(DATA, { request: '{"model":"m"}' });
    const stamped = { ...event, data: { ...event.data, trace_id: 't1', span_id: 's1' } };
    assert.deepEqual(JSON.parse(eventDataText(stamped)), {
      ...DATA,
      trace_id: 't1',
      span_id: 's1',
      raw: { request: { model: 'm' } },
    });
  });

  it('keeps whichever part there is; no raw text without an exchange', () => {
    const onlyResponse = modelResponseEvent(DATA, { response: '{"id":"r"}' });
    assert.deepEqual(JSON.parse(eventDataText(onlyResponse)), {
      ...DATA,
      raw: { response: { id: 'r' } },
    });
    assert.deepEqual(modelResponseEvent(DATA, undefined), { type: 'model.response', data: DATA });
    assert.equal(eventDataText({ type: 'x', data: {}, raw_json: '{"a":1}' }), '{"raw":{"a":1}}');
  });

  it('takes only string parts as a raw exchange', () => {
    assert.equal(isRawExchange({ request: '{}', response: '""' }), true);
    assert.equal(isRawExchange({}), true);
    assert.equal(isRawExchange({ request: { model: 'm' } }), false);
    assert.equal(isRawExchange({ response: 1 }), false);
    assert.equal(isRawExchange(null), false);
    assert.equal(isRawExchange(['{}']), false);
  });
});
