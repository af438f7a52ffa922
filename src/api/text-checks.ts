// What characters a caller's text may hold (docs/http-api.md, Text fields).
//
// NUL anywhere: refused in every request — path, query and body, keys and values —
// because PostgreSQL's text and jsonb columns cannot hold it (a NUL reached the store
// and answered 500 there, while SQLite stored it): one rule, before any route runs, so
// both backends answer the same 400 naming the field.
//
// Free text written by a person (an agent's persona, metadata): the C0 and C1 control
// characters are refused except tab, line feed and carriage return. They print nothing,
// can rewrite a terminal or a log line, and hide text from whoever reads it next.
// Run input (turn payloads, schedule payloads) keeps them: it is the user's message as
// sent, and the model may need to see it as it was.

import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { KeelError } from '../errors.ts';
// C0 and C1 controls and DEL, without tab, line feed and carriage return: a memory
// fact's rule, the same for every free text.
import { CONTROL as FREE_TEXT_CONTROL } from '../memory/text.ts';
import { jsonObjectSchema } from './schemas.ts';

function segmentText(root: string, segments: (string | number)[]): string {
  return segments.reduce<string>(
    (path, segment) => (typeof segment === 'number' ? `${path}[${segment}]` : `${path}.${segment}`),
    root,
  );
}

/**
 * The first string (object key or value, at any depth) that `bad` matches, as
 * `root.a.b[0]` — null when there is none. Iterative: it cannot overflow the stack.
 */
export function firstBadString(
  value: unknown,
  root: string,
  bad: RegExp,
): { path: string; segments: (string | number)[]; key: boolean } | null {
  const stack: { value: unknown; segments: (string | number)[] }[] = [{ value, segments: [] }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (typeof item.value === 'string') {
      if (bad.test(item.value)) {
        return { path: segmentText(root, item.segments), segments: item.segments, key: false };
      }
      continue;
    }
    if (item.value === null || typeof item.value !== 'object' || Buffer.isBuffer(item.value)) {
      continue;
    }
    const entries: [string | number, unknown][] = Array.isArray(item.value)
      ? item.value.map((inner, index): [number, unknown] => [index, inner])
      : Object.entries(item.value);
    // Reversed, so the stack hands them out in document order.
    for (const [key, inner] of entries.reverse()) {
      const segments = [...item.segments, key];
      if (typeof key === 'string' && bad.test(key)) {
        return { path: segmentText(root, segments), segments, key: true };
      }
      stack.push({ value: inner, segments });
    }
  }
  return null;
}

/** The refusal of a NUL in `value` (params, query or body), naming where; null if none. */
export function nulProblem(value: unknown, root: string): string | null {
  const found = firstBadString(value, root, /\u0000/);
  if (!found) return null;
  return `${found.path}: ${found.key ? 'a key' : 'the value'} must not contain NUL (\\u0000)`;
}

const FREE_TEXT_MESSAGE =
  'must not contain control characters other than tab, line feed and carriage return';

/** A string of free text: no control characters but \t, \n and \r. */
export function freeTextSchema(maxLength: number) {
  return z
    .string()
    .max(maxLength)
    .refine((text) => !FREE_TEXT_CONTROL.test(text), { message: FREE_TEXT_MESSAGE });
}

/** A metadata object: any JSON, whose keys and strings follow the free-text rule. */
export const metadataSchema = jsonObjectSchema.superRefine((metadata, context) => {
  const found = firstBadString(metadata, '', FREE_TEXT_CONTROL);
  if (found) {
    const what = found.key ? 'a key' : 'the value';
    context.addIssue({
      code: 'custom',
      path: found.segments,
      message: `${what} ${FREE_TEXT_MESSAGE}`,
    });
  }
});

/**
 * Refuses a NUL in the path parameters or the query before anything (auth included)
 * looks a value up; bodies are checked as they are parsed (body-parsers.ts).
 */
export function installNulGuard(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const problem = nulProblem(request.params, 'params') ?? nulProblem(request.query, 'query');
    if (problem) throw new KeelError('VALIDATION_FAILED', problem);
  });
}
