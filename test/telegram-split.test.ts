// The Telegram adapter's 4096-character split: parts never exceed the limit, keep the
// text's order, cut at paragraph boundaries when there is one, and never halve an emoji.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { TELEGRAM_MESSAGE_LIMIT, splitMessage } from '../adapters/telegram/src/split.ts';

describe('splitMessage', () => {
  it('a short text is one part', () => {
    assert.deepEqual(splitMessage('hello'), ['hello']);
  });

  it('cuts at the last paragraph boundary inside the limit', () => {
    const first = 'a'.repeat(3000);
    const second = 'b'.repeat(3000);
    assert.deepEqual(splitMessage(`${first}\n\n${second}`), [first, second]);
  });

  it('never splits a surrogate pair', () => {
    const text = `${'x'.repeat(TELEGRAM_MESSAGE_LIMIT - 1)}😀tail`;
    const parts = splitMessage(text);
    assert.equal(parts.join(''), text);
    for (const part of parts) assert.ok(part.length <= TELEGRAM_MESSAGE_LIMIT);
    assert.ok(!parts[0]?.endsWith('\ud83d'));
  });

  it('parts are within the limit and keep every non-space character in order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string({ maxLength: 900 }), fc.constantFrom('\n\n', '\n', ' ')), {
          maxLength: 40,
        }),
        fc.integer({ min: 10, max: 400 }),
        (pieces, limit) => {
          const text = pieces.join('');
          const parts = splitMessage(text, limit);
          for (const part of parts) assert.ok(part.length <= limit);
          assert.equal(parts.join('').replace(/\s/g, ''), text.replace(/\s/g, ''));
        },
      ),
    );
  });
});
