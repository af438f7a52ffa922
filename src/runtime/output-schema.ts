// A small JSON Schema check for `output_schema`: type, required, properties, enum,
// items, additionalProperties=false. Enough to name violations for the repair note;
// unknown keywords are ignored rather than guessed at.

import type { JsonObject, JsonValue } from '../types.ts';

function typeOf(value: JsonValue): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function matchesType(value: JsonValue, expected: string): boolean {
  const actual = typeOf(value);
  return actual === expected || (expected === 'number' && actual === 'integer');
}

function asObject(value: JsonValue | undefined): JsonObject | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : null;
}

function sameJson(a: JsonValue, b: JsonValue | undefined): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Returns the violations (empty when the value matches), each naming its path. */
export function checkOutputSchema(schema: JsonObject, value: JsonValue, path = '$'): string[] {
  const problems: string[] = [];
  const type = schema.type;
  const types = typeof type === 'string' ? [type] : Array.isArray(type) ? type : null;
  if (types && !types.some((t) => typeof t === 'string' && matchesType(value, t))) {
    problems.push(`${path}: expected ${types.join(' or ')}, got ${typeOf(value)}`);
    return problems;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((option) => sameJson(option, value))) {
    problems.push(`${path}: must be one of ${JSON.stringify(schema.enum)}`);
  }
  const object = asObject(value);
  if (object) {
    if (Array.isArray(schema.required)) {
      for (const key of schema.required) {
        if (typeof key === 'string' && !(key in object)) {
          problems.push(`${path}: missing required property "${key}"`);
        }
      }
    }
    const properties = asObject(schema.properties);
    for (const [key, inner] of Object.entries(object)) {
      const innerSchema = asObject(properties?.[key]);
      if (innerSchema) problems.push(...checkOutputSchema(innerSchema, inner, `${path}.${key}`));
      else if (schema.additionalProperties === false) {
        problems.push(`${path}: unexpected property "${key}"`);
      }
    }
  }
  const items = asObject(schema.items);
  if (Array.isArray(value) && items) {
    value.forEach((item, index) => {
      problems.push(...checkOutputSchema(items, item, `${path}[${index}]`));
    });
  }
  return problems;
}
