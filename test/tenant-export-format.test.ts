// The tenant export file's checks (src/store/rules/tenant-export.ts), line by line: what
// `keel import` refuses before it opens a store, each naming the line. The end-to-end
// move between real stores is test/tenant-export.test.ts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isKeelError } from '../src/errors.ts';
import {
  decodeDump,
  encodeEndLine,
  encodeRowLine,
  vectorBytes,
  vectorValues,
} from '../src/store/rules/tenant-export.ts';

const HEADER = JSON.stringify({
  format: 'keel-tenant-export',
  version: 1,
  tenant: 'ada',
  exported_at: '2026-12-03T06:00:00.000Z',
  keel_version: '0.1.0',
  source: 'sqlite',
  include_active: false,
});
const TENANT = encodeRowLine('tenants', {
  name: 'ada',
  metadata: '{}',
  created_at: 1,
  updated_at: 1,
});
const RUN = encodeRowLine('runs', {
  run_id: 'r1',
  tenant: 'ada',
  agent: 'helper',
  scope: 'chat',
  source: 'api',
  input: '{"text":"hi"}',
  request_id: null,
  fingerprint: 'f',
  delivery_destination: null,
  status: 'succeeded',
  output: '{"reply":"echo: hi"}',
  error: null,
  attempt: 1,
  steps: 1,
  usage: '{}',
  elapsed_ms: 3,
  lease_owner: null,
  lease_expires_at: null,
  created_at: 1,
  started_at: 1,
  finished_at: 2,
  steer_target: null,
});
const ENTRY = encodeRowLine('run_entries', {
  run_id: 'r1',
  seq: 1,
  attempt: 1,
  kind: 'user',
  body: '{"text":"hi"}',
  ts: 1,
});

/** The file of these row lines, with its header and a matching end line. */
function file(...rows: string[]): string[] {
  return [HEADER, ...rows, encodeEndLine(rows.length)];
}

function refusal(lines: readonly string[]): string {
  try {
    decodeDump(lines);
  } catch (error) {
    assert.ok(isKeelError(error), String(error));
    assert.equal(error.code, 'VALIDATION_FAILED');
    return error.message;
  }
  assert.fail('the file was accepted');
}

describe('tenant export file checks', () => {
  it('accepts a whole file, rows in order with their lines', () => {
    const dump = decodeDump(file(TENANT, RUN, ENTRY));
    assert.equal(dump.header.tenant, 'ada');
    assert.deepEqual(
      dump.rows.map((row) => [row.table, row.line]),
      [
        ['tenants', 2],
        ['runs', 3],
        ['run_entries', 4],
      ],
    );
  });

  it('refuses a header of another format, version or tenant name on line 1', () => {
    assert.match(refusal(['{"format":"tar"}']), /^line 1: not a keel-tenant-export file/);
    const v2 = HEADER.replace('"version":1', '"version":2');
    assert.match(refusal([v2, TENANT]), /^line 1: version 2: this keel reads version 1/);
    const badName = HEADER.replace('"tenant":"ada"', '"tenant":"Ada Lovelace"');
    assert.match(refusal([badName, TENANT]), /^line 1: tenant must match/);
    assert.match(refusal([]), /^line 1: the file is empty/);
  });

  it('refuses unknown tables and columns, missing and mistyped values, naming the line', () => {
    assert.match(refusal(file(TENANT, '{"table":"passwords","row":{}}')), /^line 3: unknown table/);
    const extra = RUN.replace('"run_id":"r1"', '"run_id":"r1","owner":"x"');
    assert.match(refusal(file(TENANT, extra)), /^line 3: runs: unknown column owner/);
    const missing = RUN.replace('"agent":"helper",', '');
    assert.match(refusal(file(TENANT, missing)), /^line 3: runs.agent is required/);
    const fractional = RUN.replace('"steps":1', '"steps":1.5');
    assert.match(refusal(file(TENANT, fractional)), /^line 3: runs.steps: expected int/);
    const notJson = RUN.replace('"usage":"{}"', '"usage":"{"');
    assert.match(refusal(file(TENANT, notJson)), /^line 3: runs.usage: expected json/);
    assert.match(refusal(file(TENANT, '{"table":')), /^line 3: not a JSON line/);
  });

  it('refuses rows of another tenant, a tenant row not first, a journal without its run', () => {
    const other = RUN.replace('"tenant":"ada"', '"tenant":"bob"');
    assert.match(refusal(file(TENANT, other)), /^line 3: runs: row of tenant "bob"/);
    assert.match(refusal(file(RUN, TENANT)), /^line 2: the first row must be the tenant/);
    assert.match(
      refusal(file(TENANT, ENTRY, RUN)),
      /^line 3: run_entries: run r1 is not an earlier run/,
    );
  });

  it('refuses a file cut short, a wrong count and lines after the end', () => {
    const whole = file(TENANT, RUN, ENTRY);
    assert.match(refusal(whole.slice(0, -1)), /without its end line/);
    const counted = [HEADER, TENANT, RUN, encodeEndLine(3)];
    assert.match(refusal(counted), /^line 4: the end line counts 3 rows, the file has 2/);
    assert.match(refusal([...whole, TENANT]), /^line 6: a line after the end line/);
    // Blank lines after the end (an editor's newline) are fine.
    assert.equal(decodeDump([...whole, '']).rows.length, 3);
  });

  it('keeps a memory vector exactly, and refuses one without its embedder and dim', () => {
    const values = [0.1, -0.5, 1 / 3, 3.4e38];
    const bytes = vectorBytes(values);
    const fact = {
      tenant: 'ada',
      namespace: 'notes',
      id: 'f1',
      text: 'owls',
      metadata: '{}',
      created_at: 1,
      updated_at: 1,
      embedder: 'hash-256',
      dim: 4,
      vector: bytes,
    };
    const dump = decodeDump(file(TENANT, encodeRowLine('memory_facts', fact)));
    const read = dump.rows[1]?.row.vector as Buffer;
    assert.deepEqual(read, bytes);
    assert.deepEqual(vectorValues(read), Array.from(new Float32Array(values)));
    const noDim = encodeRowLine('memory_facts', { ...fact, dim: 3 });
    assert.match(
      refusal(file(TENANT, noDim)),
      /^line 3: memory_facts: vector needs its embedder and dim/,
    );
    const orphan = encodeRowLine('memory_facts', { ...fact, vector: null });
    assert.match(
      refusal(file(TENANT, orphan)),
      /^line 3: memory_facts: embedder and dim without a vector/,
    );
  });
});
