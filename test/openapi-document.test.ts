// The served /openapi.json as a contract (issue 20): swagger-parser validates it,
// openapi-typescript generates types from it, `redocly lint` (recommended rules) finds no
// error, every /v1 route of docs/http-api.md has a documented 2xx schema, it equals the
// committed docs/openapi.json, src/client/schema.ts is generated from that, and the
// compatibility check flags a removed field, route or enum value and a new required field.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import openapiTS, { astToString } from 'openapi-typescript';
import { breakingChanges } from '../src/api/openapi/breaking.ts';
import { DOCUMENT_PATH, servedDocument } from '../scripts/openapi.ts';
import { SCHEMA_PATH, clientSchemaText } from '../scripts/openapi-client.ts';

const root = join(import.meta.dirname, '..');
type Json = Record<string, unknown>;
type Operation = { responses: Record<string, { content?: Record<string, { schema?: unknown }> }> };

/** `GET /v1/tenants/{tenant}/agents/{agent}` for each route row of docs/http-api.md. */
async function documentedRoutes(): Promise<string[]> {
  const text = await readFile(join(root, 'docs', 'http-api.md'), 'utf8');
  const routes: string[] = [];
  for (const line of text.split('\n')) {
    const match =
      /^\|\s*((?:GET|POST|PUT|PATCH|DELETE)(?:\/(?:GET|POST|PUT|PATCH|DELETE))*)\s*\|\s*(\S+)\s*\|/.exec(
        line,
      );
    if (!match) continue;
    const path = match[2]!
      .replace(/^T(?=\/|$)/, '/v1/tenants/:tenant')
      .replace(/\*\w*$/, ':path')
      .replace(/:(\w+)/g, '{$1}');
    for (const method of match[1]!.split('/')) routes.push(`${method} ${path}`);
  }
  return routes;
}

describe('the OpenAPI document', () => {
  let served: Json;
  let dir: string;

  before(async () => {
    const started = Date.now();
    served = await servedDocument();
    console.log(`# served document read in ${Date.now() - started} ms`);
    dir = await mkdtemp(join(tmpdir(), 'keel-openapi-test-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('passes swagger-parser validation and openapi-typescript generation', async () => {
    await SwaggerParser.validate(structuredClone(served) as never);
    const types = astToString(await openapiTS(structuredClone(served) as never));
    assert.match(types, /"\/v1\/tenants\/\{tenant\}\/turns": \{/);
    assert.match(types, /Run: \{/);
  });

  it('has no error under redocly lint with the recommended rules', async () => {
    const file = join(dir, 'openapi.json');
    await writeFile(file, JSON.stringify(served));
    const bin = join(root, 'node_modules', '.bin', 'redocly');
    const { stdout } = await promisify(execFile)(
      bin,
      ['lint', file, '--extends', 'recommended', '--format', 'json'],
      { maxBuffer: 64 * 1024 * 1024 },
    ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    const report = JSON.parse(stdout) as {
      problems: Array<{
        severity: string;
        ruleId: string;
        message: string;
        location?: Array<{ pointer?: string }>;
      }>;
    };
    const errors = report.problems
      .filter((problem) => problem.severity === 'error')
      .map(
        (problem) =>
          `${problem.ruleId}: ${problem.message} at ${problem.location?.[0]?.pointer ?? '?'}`,
      );
    const warnings = report.problems.length - errors.length;
    console.log(`# redocly: ${errors.length} errors, ${warnings} warnings`);
    assert.deepEqual(errors, []);
  });

  it('documents a 2xx response schema for every /v1 route of docs/http-api.md', async () => {
    const paths = served.paths as Record<string, Record<string, Operation>>;
    const routes = (await documentedRoutes()).filter((route) => route.includes(' /v1/'));
    assert.ok(routes.length >= 50, `the route table parsed (${routes.length} routes)`);
    const offenders: string[] = [];
    for (const route of routes) {
      const [method, path] = route.split(' ') as [string, string];
      const operation = paths[path]?.[method.toLowerCase()];
      if (!operation) {
        offenders.push(`${route}: not in the document`);
        continue;
      }
      const documented = Object.entries(operation.responses).some(
        ([status, response]) =>
          status.startsWith('2') &&
          Object.values(response.content ?? {}).some((media) => media.schema !== undefined),
      );
      if (!documented)
        offenders.push(`${route}: no 2xx response schema (src/api/openapi/responses.ts)`);
    }
    console.log(`# ${routes.length} routes of docs/http-api.md checked`);
    assert.deepEqual(offenders, [], `routes without a documented answer:\n${offenders.join('\n')}`);
  });

  it('every operation names its security and error answers', () => {
    const paths = served.paths as Record<
      string,
      Record<string, Operation & { security?: unknown[] }>
    >;
    const offenders: string[] = [];
    for (const [path, item] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (!Array.isArray(operation.security)) offenders.push(`${method} ${path}: no security`);
        if (!Object.keys(operation.responses).some((status) => status.startsWith('4'))) {
          offenders.push(`${method} ${path}: no 4xx answer`);
        }
      }
    }
    assert.deepEqual(offenders, []);
    const turns = paths['/v1/tenants/{tenant}/turns']!.post!;
    assert.deepEqual(turns.security, [{ adminToken: [] }, { tenantToken: [] }]);
    const conflict = turns.responses['409']!.content!['application/json']!.schema as Json;
    const code = (
      (conflict.properties as Json).error as { properties: { code: { enum: string[] } } }
    ).properties.code.enum;
    assert.ok(code.includes('SCOPE_BUSY'), 'a busy scope is documented on POST T/turns');
    assert.deepEqual(paths['/v1/tenants']!.post!.security, [{ adminToken: [] }]);
  });

  it('equals the committed docs/openapi.json (npm run openapi rewrites it)', async () => {
    const committed = JSON.parse(await readFile(DOCUMENT_PATH, 'utf8')) as Json;
    const breaking = breakingChanges(committed, served);
    assert.deepEqual(
      breaking,
      [],
      `breaking changes against docs/openapi.json — note them in CHANGELOG.md`,
    );
    assert.deepEqual(served, committed, 'docs/openapi.json is stale: run npm run openapi');
  });

  it('src/client/schema.ts is generated from docs/openapi.json (npm run openapi:client)', async () => {
    const committed = JSON.parse(await readFile(DOCUMENT_PATH, 'utf8')) as Json;
    const expected = await clientSchemaText(committed);
    assert.equal(await readFile(SCHEMA_PATH, 'utf8'), expected, 'run npm run openapi:client');
  });

  it('the compatibility check flags breaking changes in a mutated copy', () => {
    const base = structuredClone(served);
    assert.deepEqual(breakingChanges(base, structuredClone(served)), []);

    const removedField = structuredClone(served) as {
      components: { schemas: Record<string, Json> };
    };
    delete (removedField.components.schemas.Run!.properties as Json).status;
    assert.ok(
      breakingChanges(base, removedField).some((line) => /field status removed/.test(line)),
      'a removed response field is breaking',
    );

    const removedRoute = structuredClone(served) as { paths: Record<string, Json> };
    delete removedRoute.paths['/v1/tenants/{tenant}/deliveries/claim'];
    assert.ok(
      breakingChanges(base, removedRoute).includes(
        'POST /v1/tenants/{tenant}/deliveries/claim: route removed',
      ),
    );

    const newRequired = structuredClone(served) as Json;
    const turnBody = (
      ((newRequired.paths as Json)['/v1/tenants/{tenant}/turns'] as Json).post as Json
    ).requestBody as { content: Record<string, { schema: { required: string[] } }> };
    turnBody.content['application/json']!.schema.required.push('request_id');
    assert.ok(
      breakingChanges(base, newRequired).some((line) => /new required field request_id/.test(line)),
    );

    const removedEnum = structuredClone(served) as {
      components: { schemas: Record<string, Json> };
    };
    const status = (
      removedEnum.components.schemas.Run!.properties as Record<string, { enum: string[] }>
    ).status!;
    status.enum = status.enum.filter((value) => value !== 'waiting');
    assert.ok(
      breakingChanges(base, removedEnum).some((line) => /enum value "waiting" removed/.test(line)),
    );

    // Additive changes are not breaking: a new route and a new optional response field.
    const additive = structuredClone(served) as {
      paths: Record<string, Json>;
      components: { schemas: Record<string, Json> };
    };
    additive.paths['/v1/tenants/{tenant}/new-thing'] = {};
    (additive.components.schemas.Run!.properties as Json).extra = { type: 'string' };
    assert.deepEqual(breakingChanges(base, additive), []);
  });
});
