// The model.response event's stored text: the provider's raw exchange (JSON texts) is
// spliced into the data's JSON as it came, so reading the event back gives the data
// plus `raw: {request, response}` as values.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRawExchange, modelResponseEvent } from '../src/runtime/model-response-event.ts';

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
    assert.ok(event.data_json?.includes(sent), 'the request text is kept byte for byte');
    assert.deepEqual(JSON.parse(event.data_json ?? ''), {
      ...DATA,
      raw: {
        request: { model: 'm', messages: [{ role: 'user', content: 'hi "there"' }], n: 1.5 },
        response: 'data: {"id":"x"}\n\n',
      },
    });
  });

  it('keeps whichever part there is, and no text at all without an exchange', () => {
    const onlyResponse = modelResponseEvent(DATA, { response: '{"id":"r"}' });
    assert.deepEqual(JSON.parse(onlyResponse.data_json ?? ''), {
      ...DATA,
      raw: { response: { id: 'r' } },
    });
    assert.deepEqual(modelResponseEvent(DATA, undefined), { type: 'model.response', data: DATA });
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
