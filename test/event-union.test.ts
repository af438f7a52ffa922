// The one run event union (src/events.ts): every event type keel writes — the loop's
// RunEvents and the store's own (queued, claimed, steered, approvals, terminal) — is a
// member, so the store's rows, the SSE route and the TypeScript client read it typed, and
// each member is classified for the stream's end (EVENT_ENDS_STREAM is exhaustive by type).

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { EVENT_ENDS_STREAM, endsStream } from '../src/events.ts';

const SRC = new URL('../src', import.meta.url).pathname;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** Event types written in src/: `type: 'a.b'` literals and appendEvent(…, 'a.b', …) calls. */
function writtenEventTypes(): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of sourceFiles(SRC)) {
    if (file.startsWith(join(SRC, 'client')) || file.endsWith('/events.ts')) continue;
    const text = readFileSync(file, 'utf8');
    const literals = [
      ...text.matchAll(/\btype: '([a-z_]+\.[a-z_]+)'/g),
      ...text.matchAll(/appendEvent\([^;]*?'([a-z_]+\.[a-z_]+)'/gs),
    ];
    for (const [, type] of literals) if (type) found.set(type, relative(SRC, file));
  }
  return found;
}

describe('the run event union', () => {
  it('holds every event type the loop and the store write', () => {
    const written = writtenEventTypes();
    assert.ok(written.size >= 20, `found only ${written.size} event types`);
    const missing = [...written].filter(([type]) => !Object.hasOwn(EVENT_ENDS_STREAM, type));
    assert.deepEqual(missing, []);
  });

  it('ends a stream at the terminal events only', () => {
    const ending = Object.entries(EVENT_ENDS_STREAM)
      .filter(([, ends]) => ends)
      .map(([type]) => type)
      .sort();
    assert.deepEqual(ending, ['run.cancelled', 'run.failed', 'run.succeeded']);
    assert.equal(endsStream({ type: 'run.failed' }), true);
    assert.equal(endsStream({ type: 'tool.result' }), false);
    assert.equal(endsStream({ type: 'some.future_type' }), false);
  });
});
