// `output_schema` checks by ajv (JSON Schema draft-07 keywords, `$ref` within the schema,
// `oneOf`, `minimum`, `pattern`, …). Unknown keywords and `format` are ignored rather
// than guessed at, and a schema is never fetched from anywhere: a `$ref` that does not
// resolve inside the schema makes the schema unusable. Each distinct schema is compiled
// once (cached by its canonical JSON, bounded) in its own Ajv instance, so two agents'
// `$id`s never collide and an evicted schema leaves nothing behind.

import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { stringify } from 'safe-stable-stringify';
import type { JsonObject, JsonValue } from '../types.ts';

/** Deeper schemas are refused before ajv sees them (its compiler recurses per level). */
const MAX_SCHEMA_DEPTH = 64;
const DEFAULT_CACHE_SIZE = 256;

type SchemaCheck =
  | { kind: 'valid' }
  | { kind: 'invalid'; problems: string[] }
  /** The schema itself cannot be used (too deep, not a valid JSON Schema, unresolved $ref). */
  | { kind: 'unusable'; reason: string };

type Compiled = { kind: 'ok'; validate: ValidateFunction } | { kind: 'unusable'; reason: string };

function depthOf(value: JsonValue, limit: number): number {
  // Iterative: a pathological schema must not overflow the stack here either.
  let deepest = 0;
  const stack: [JsonValue, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [JsonValue, number];
    if (node === null || typeof node !== 'object') continue;
    deepest = Math.max(deepest, depth);
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      stack.push([child, depth + 1]);
    }
  }
  return deepest;
}

/** `/a/0/b~1c` → `$.a[0]["b/c"]`-style paths, as the repair note names them. */
function pathOf(instancePath: string): string {
  if (instancePath === '') return '$';
  return (
    '$' +
    instancePath
      .slice(1)
      .split('/')
      .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
      .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`))
      .join('')
  );
}

function describe(error: ErrorObject): string {
  const extra =
    error.keyword === 'additionalProperties'
      ? ` "${String((error.params as { additionalProperty?: unknown }).additionalProperty)}"`
      : '';
  return `${pathOf(error.instancePath)}: ${error.message ?? error.keyword}${extra}`;
}

/** Compiled output schemas of one process (the worker holds one). */
export class OutputSchemas {
  private readonly cache = new Map<string, Compiled>();

  constructor(private readonly capacity = DEFAULT_CACHE_SIZE) {}

  /** Checks `value` against `schema`; the violations each name their path. */
  check(schema: JsonObject, value: JsonValue): SchemaCheck {
    const compiled = this.compiled(schema);
    if (compiled.kind === 'unusable') return compiled;
    if (compiled.validate(value)) return { kind: 'valid' };
    const problems = [...new Set((compiled.validate.errors ?? []).map(describe))];
    return { kind: 'invalid', problems };
  }

  private compiled(schema: JsonObject): Compiled {
    const key = stringify(schema);
    const cached = this.cache.get(key);
    if (cached) {
      // Most recently used last: the first key is the one to evict.
      this.cache.delete(key);
      this.cache.set(key, cached);
      return cached;
    }
    const compiled = compile(schema);
    this.cache.set(key, compiled);
    if (this.cache.size > this.capacity) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    return compiled;
  }
}

function compile(schema: JsonObject): Compiled {
  if (depthOf(schema, MAX_SCHEMA_DEPTH) > MAX_SCHEMA_DEPTH) {
    return { kind: 'unusable', reason: `nested deeper than ${MAX_SCHEMA_DEPTH} levels` };
  }
  try {
    const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false, logger: false });
    return { kind: 'ok', validate: ajv.compile(schema) };
  } catch (error) {
    return { kind: 'unusable', reason: error instanceof Error ? error.message : String(error) };
  }
}
