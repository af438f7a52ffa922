// Zod building blocks shared by the routes. The same schemas validate requests and
// generate /openapi.json, so the document cannot drift from what is enforced.

import { z } from 'zod';
import { NAME_PATTERN, isValidRequestId, scopeProblem } from '../ids.ts';
import type { JsonObject } from '../types.ts';
import { DELIVERY_STATUSES, RUN_STATUSES } from '../types.ts';

export const nameSchema = z
  .string()
  .regex(NAME_PATTERN, { message: `must match ${NAME_PATTERN.source}` })
  .describe('a name: lower-case letters, digits, ".", "_" and "-", at most 64');

export const scopeSchema = z
  .string()
  .superRefine((value, context) => {
    const problem = scopeProblem(value);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  })
  .describe('the thread id: any UTF-8 string of 1–256 bytes without control characters');

export const requestIdSchema = z
  .string()
  .refine(isValidRequestId, { message: 'must be 1–200 printable characters' })
  .describe('idempotency key, unique per tenant');

/** Any JSON object (not an array); values are JSON. */
export const jsonObjectSchema = z.record(
  z.string(),
  z.json().meta({ id: 'JsonValue', description: 'any JSON value' }),
) as unknown as z.ZodType<JsonObject, JsonObject>;

export const destinationSchema = z
  .string()
  .min(1, { message: 'must not be empty' })
  .max(512)
  .regex(/^[^\u0000-\u001f\u007f]+$/, { message: 'must not contain control characters' });

export const cursorSchema = z.string().min(1).max(1024).describe('opaque cursor from next_cursor');

/** The query of a list of named things (agents, secrets, MCP servers, …): by name, paged. */
export const namedListQuery = z.strictObject({
  limit: queryInt(1, 200, 100),
  cursor: cursorSchema.optional(),
});

/** A non-negative integer in a query string (which arrives as text). */
export function queryInt(min: number, max: number, fallback: number) {
  return (
    z
      .string()
      .regex(/^\d{1,9}$/, { message: `must be an integer ${min}–${max}` })
      .transform(Number)
      .pipe(z.number().int().min(min).max(max))
      // prefault: the fallback text goes through the same parse, so the result is a number.
      .prefault(String(fallback))
      .describe(`integer ${min}–${max}, default ${fallback}`)
  );
}

export const tenantParams = z.strictObject({ tenant: nameSchema });

export const runStatusSchema = z.enum(RUN_STATUSES);
export const deliveryStatusSchema = z.enum(DELIVERY_STATUSES);

export const deletedSchema = z.object({ deleted: z.literal(true) });
