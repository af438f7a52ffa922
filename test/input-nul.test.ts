// A NUL (U+0000) in any request field (issue: found by attacking keel, item 5). PostgreSQL
// text and jsonb columns cannot hold it: a secret, a persona, a scope, a run input, a
// memory fact or a path parameter with a NUL answered 500 there, while SQLite stored it.
// Now every backend answers 400 VALIDATION_FAILED naming the field, before anything is
// written — a whole keel on each backend, real HTTP.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { TestKeel } from './helpers/keel-server.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import {
  POSTGRES_URL,
  dropSchemas,
  freshSchemaName,
  skipUnlessPostgres,
} from './helpers/postgres.ts';
import { requestJson } from './helpers/json-request.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

const NUL = '\u0000';
const skipPostgres = await skipUnlessPostgres('input-nul.test.ts');

interface Case {
  what: string;
  method: string;
  /** Under /v1/tenants/acme unless it starts with /v1. */
  path: string;
  body?: unknown;
  field: RegExp;
}

const CASES: Case[] = [
  {
    what: 'secret value',
    method: 'PUT',
    path: '/secrets/s',
    body: { value: `a${NUL}b` },
    field: /body\.value/,
  },
  {
    what: 'persona',
    method: 'PUT',
    path: '/agents/b',
    body: { model: 'fixture/echo', persona: `be kind${NUL}` },
    field: /body\.persona/,
  },
  {
    what: 'tenant metadata value',
    method: 'POST',
    path: '/v1/tenants',
    body: { name: 'other', metadata: { note: `x${NUL}` } },
    field: /body\.metadata\.note/,
  },
  {
    what: 'tenant metadata key',
    method: 'PATCH',
    path: '/v1/tenants/acme',
    body: { metadata: { [`k${NUL}`]: 1 } },
    field: /body\.metadata\.k/,
  },
  {
    what: 'turn input',
    method: 'POST',
    path: '/turns',
    body: { agent: 'a', scope: 's', payload: { text: `hi${NUL}` } },
    field: /body\.payload\.text/,
  },
  {
    what: 'turn scope',
    method: 'POST',
    path: '/turns',
    body: { agent: 'a', scope: `s${NUL}`, payload: { text: 'hi' } },
    field: /body\.scope/,
  },
  {
    what: 'schedule input',
    method: 'PUT',
    path: '/schedules/nightly',
    body: { agent: 'a', scope: 's', every_ms: 3_600_000, payload: { text: `go${NUL}` } },
    field: /body\.payload\.text/,
  },
  {
    what: 'memory fact',
    method: 'PUT',
    path: '/memory/notes/f1',
    body: { text: `fact${NUL}` },
    field: /body\.text/,
  },
  {
    what: 'memory fact metadata',
    method: 'PUT',
    path: '/memory/notes/f2',
    body: { text: 'fact', metadata: { from: NUL } },
    field: /body\.metadata\.from/,
  },
  { what: 'run id in the path', method: 'GET', path: '/runs/x%00y', field: /params\.id/ },
  {
    what: 'thread scope in the path',
    method: 'GET',
    path: '/threads/a/s%00',
    field: /params\.scope/,
  },
  { what: 'query', method: 'GET', path: '/runs?scope=s%00', field: /query\.scope/ },
];

async function checkBackend(keel: TestKeel): Promise<void> {
  const call = (method: string, path: string, body?: unknown) =>
    requestJson(keel.url, method, path.startsWith('/v1') ? path : `/v1/tenants/acme${path}`, body);
  assert.equal((await call('POST', '/v1/tenants', { name: 'acme' })).status, 201);
  assert.equal((await call('PUT', '/agents/a', { model: 'fixture/echo' })).status, 201);
  const statuses: Record<string, number> = {};
  for (const testCase of CASES) {
    const answer = await call(testCase.method, testCase.path, testCase.body);
    statuses[testCase.what] = answer.status;
    assert.equal(answer.status, 400, `${testCase.what}: ${answer.text}`);
    assert.equal(answer.body.error.code, 'VALIDATION_FAILED', testCase.what);
    assert.match(answer.body.error.message, testCase.field, testCase.what);
  }
  console.log(`${keel.store.kind}: ${JSON.stringify(statuses)}`);
  // Nothing was written.
  assert.deepEqual((await call('GET', '/secrets')).body.secrets, []);
  assert.deepEqual(
    (await call('GET', '/agents')).body.agents.map((agent: Loose) => agent.name),
    ['a'],
  );
  assert.deepEqual(
    (await call('GET', '/v1/tenants')).body.tenants.map((tenant: Loose) => tenant.name),
    ['acme'],
  );
  assert.deepEqual((await call('GET', '/v1/tenants/acme')).body.tenant.metadata, {});
  assert.deepEqual((await call('GET', '/runs')).body.runs, []);
  assert.deepEqual((await call('GET', '/schedules')).body.schedules, []);
  assert.equal((await call('GET', '/memory/notes/f1')).status, 404);
  assert.equal((await call('GET', '/memory/notes/f2')).status, 404);
  // The server is still up and answers.
  assert.equal((await call('GET', '/v1/tenants/acme')).status, 200);
}

describe('a NUL in any field is a 400 naming it, on both backends', () => {
  it('SQLite', async () => {
    const keel = await startTestKeel();
    try {
      await checkBackend(keel);
    } finally {
      await keel.close();
    }
  });

  const schemas: string[] = [];
  after(() => dropSchemas(schemas));
  it('PostgreSQL', { skip: skipPostgres }, async () => {
    const schema = freshSchemaName('keel_nul');
    schemas.push(schema);
    const keel = await startTestKeel({
      env: { KEEL_STORE_URL: `${POSTGRES_URL}?schema=${schema}` },
    });
    try {
      assert.equal(keel.store.kind, 'postgres');
      await checkBackend(keel);
    } finally {
      await keel.close();
    }
  });
});
