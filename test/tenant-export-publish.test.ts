// keel export never overwrites (docs/operations.md, "Moving a tenant"): the file that
// appears at --out after the command looked (another export, a user's file) is kept, and
// the export is refused as it is when the file was there from the start.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { publishExport } from '../src/cli/tenant-transfer.ts';
import { UsageError } from '../src/cli/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'keel-export-publish-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('publishing the export file', () => {
  it('puts the complete file under its name and drops the temporary one', () => {
    const out = join(dir, 'alice.jsonl');
    const partial = `${out}.partial-1`;
    writeFileSync(partial, 'the export\n', { mode: 0o600 });
    publishExport(partial, out);
    assert.equal(readFileSync(out, 'utf8'), 'the export\n');
    assert.equal(existsSync(partial), false);
  });

  it('a file that appeared at --out after the check is not replaced: the export is refused', () => {
    const out = join(dir, 'bob.jsonl');
    const partial = `${out}.partial-2`;
    writeFileSync(partial, 'the export\n');
    writeFileSync(out, 'someone else’s file\n'); // after exportCommand's existsSync
    assert.throws(
      () => publishExport(partial, out),
      (error: unknown) =>
        error instanceof UsageError &&
        /bob\.jsonl exists; keel export never overwrites/.test(error.message),
    );
    assert.equal(readFileSync(out, 'utf8'), 'someone else’s file\n');
  });
});
