// Body parsers. Only JSON (everywhere) and TOML (routes that opt in with
// `config.accepts_toml`) are understood; every other content type is a 415. Parse
// failures carry catalogue codes so the caller learns what was wrong and where.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { TomlError, parse as parseToml } from 'smol-toml';
import { KeelError } from '../errors.ts';
import { nestingProblem } from '../nesting.ts';
import { nulProblem } from './text-checks.ts';

/** A key that would reach an object's prototype if a body were ever merged into another. */
const FORBIDDEN_KEY = '__proto__';

/** Refuses absurd nesting (naming where), then `__proto__` keys, then a NUL anywhere. */
function checkShape(value: unknown): void {
  // First, and iteratively: the key walk below and every later step recurse.
  const tooDeep = nestingProblem(value, 'body');
  if (tooDeep) throw new KeelError('VALIDATION_FAILED', tooDeep.message);
  rejectProtoKeys(value);
  const nul = nulProblem(value, 'body');
  if (nul) throw new KeelError('VALIDATION_FAILED', nul);
}

function rejectProtoKeys(value: unknown): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) rejectProtoKeys(item);
    return;
  }
  for (const [key, inner] of Object.entries(value)) {
    if (key === FORBIDDEN_KEY) {
      throw new KeelError('VALIDATION_FAILED', 'body: a key named __proto__ is not allowed');
    }
    rejectProtoKeys(inner);
  }
}

function parseJsonBody(text: string): unknown {
  // An empty body is "no body": a route whose schema needs one reports the missing field.
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new KeelError('INVALID_JSON', `the body is not valid JSON: ${(error as Error).message}`);
  }
  // Checked after parsing, so escaped spellings (\u005f_proto__) are caught too.
  checkShape(value);
  return value;
}

function parseTomlBody(text: string): unknown {
  let value: unknown;
  try {
    value = parseToml(text);
  } catch (error) {
    if (error instanceof TomlError) {
      const reason = error.message.split('\n')[0] ?? 'syntax error';
      throw new KeelError(
        'INVALID_TOML',
        `the body is not valid TOML at line ${error.line}, column ${error.column}: ${reason}`,
        { line: error.line, column: error.column },
      );
    }
    throw new KeelError('INVALID_TOML', 'the body is not valid TOML');
  }
  // Before the JSON round trip below: deep dotted keys or table headers (`a.a.a…`) parse
  // fine but would overflow JSON.stringify's stack.
  checkShape(value);
  // TOML dates are Date objects; the schemas speak JSON, so dates become RFC 3339 strings.
  return JSON.parse(JSON.stringify(value)) as unknown;
}

export function installBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    (_request: FastifyRequest, body: string | Buffer, done) => {
      try {
        done(null, parseJsonBody(String(body)));
      } catch (error) {
        done(error as Error, undefined);
      }
    },
  );
  app.addContentTypeParser(
    'application/toml',
    { parseAs: 'string' },
    (request: FastifyRequest, body: string | Buffer, done) => {
      if (request.routeOptions.config.accepts_toml !== true) {
        done(new KeelError('UNSUPPORTED_MEDIA_TYPE', 'this route accepts application/json only'));
        return;
      }
      try {
        done(null, parseTomlBody(String(body)));
      } catch (error) {
        done(error as Error, undefined);
      }
    },
  );
}
