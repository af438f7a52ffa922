// The turn fingerprint is stored with every run that has a request_id, and a replay is
// compared with it: it must not change across versions. The pinned digest below was
// computed by the hand-written canonical JSON keel used before safe-stable-stringify;
// equal values in any key order hash alike.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TurnRequest } from '../src/runtime/enqueue.ts';
import { canonicalJson, turnFingerprint } from '../src/runtime/enqueue.ts';

const TURN: TurnRequest = {
  tenant: 't',
  agent: 'a',
  scope: 's',
  payload: { text: 'hi', z: [1, { b: 2, a: 1 }], é: 'ü' },
  delivery: { destination: 'x' },
};

describe('turn fingerprint', () => {
  it('is the digest stored by earlier versions', () => {
    assert.equal(
      turnFingerprint(TURN),
      '26f0a990e925f5d435dc6522753a473f1f3f6bd0b82dbf5f44d64a57dd15a284',
    );
  });

  it('sorts keys by code unit at every depth and escapes strings as JSON does', () => {
    assert.equal(
      canonicalJson({ b: [{ d: 1, c: '\u2028"' }], a: null, B: -0, é: '\ud800', 10: 1, 2: 2 }),
      '{"10":1,"2":2,"B":0,"a":null,"b":[{"c":"\u2028\\"","d":1}],"é":"\\ud800"}',
    );
    assert.equal(canonicalJson(undefined), 'null');
  });

  it('does not depend on key order', () => {
    const reordered: TurnRequest = {
      delivery: { destination: 'x' },
      payload: { é: 'ü', z: [1, { a: 1, b: 2 }], text: 'hi' },
      scope: 's',
      agent: 'a',
      tenant: 't',
    };
    assert.equal(turnFingerprint(reordered), turnFingerprint(TURN));
  });
});
