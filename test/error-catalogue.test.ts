// docs/http-api.md lists every code of src/errors.ts with its status; this keeps the two
// in step in both directions.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ERROR_CATALOGUE } from '../src/errors.ts';

const DOC = new URL('../docs/http-api.md', import.meta.url);
const ROW = /^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|\s*(\d{3})\s*\|/;

function documentedCodes(): Map<string, number> {
  const text = readFileSync(DOC, 'utf8');
  const start = text.indexOf('## Error catalogue');
  assert.ok(start >= 0, 'docs/http-api.md has an "## Error catalogue" section');
  const rest = text.slice(start + 1);
  const end = rest.search(/^## /m);
  const section = end >= 0 ? rest.slice(0, end) : rest;
  const codes = new Map<string, number>();
  for (const line of section.split('\n')) {
    const match = ROW.exec(line);
    if (!match) continue;
    const [, code, status] = match as unknown as [string, string, string];
    assert.ok(!codes.has(code), `${code} is documented twice`);
    codes.set(code, Number(status));
  }
  return codes;
}

describe('error catalogue', () => {
  const documented = documentedCodes();

  it('documents every code of src/errors.ts with its status', () => {
    for (const [code, entry] of Object.entries(ERROR_CATALOGUE)) {
      assert.ok(documented.has(code), `${code} is missing from docs/http-api.md`);
      assert.equal(documented.get(code), entry.status, `${code}: documented status`);
    }
  });

  it('documents no code that src/errors.ts lacks', () => {
    for (const code of documented.keys()) {
      assert.ok(code in ERROR_CATALOGUE, `${code} is documented but not in src/errors.ts`);
    }
  });

  it('codes are UPPER_SNAKE with a public message', () => {
    for (const [code, entry] of Object.entries(ERROR_CATALOGUE)) {
      assert.match(code, /^[A-Z][A-Z0-9_]*$/);
      assert.ok(entry.message.length > 0, code);
    }
  });
});
