// What the five memory tools share: the port check, the namespace and id schemas, the
// mapping of capability errors to tool errors, and the maintainer's host-enforced rule.

import { z } from 'zod';
import { isKeelError } from '../../errors.ts';
import { MAINTAINER_AGENT } from '../../memory/maintenance.ts';
import { DEFAULT_NAMESPACE, MAX_FACT_BYTES, utf8Length } from '../../memory/text.ts';
import type { ToolContext } from '../tool.ts';
import { ToolError } from '../tool.ts';
import type { MemoryPort } from './memory-port.ts';

export const MEMORY_SEARCH_MAX = 20;
export const MEMORY_LIST_MAX = 100;

export const namespaceInput = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, { message: 'lower-case letters, digits, ".", "_", "-"' })
  .default(DEFAULT_NAMESPACE)
  .describe('memory namespace (default "default")');

export const factIdInput = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, { message: 'letters, digits, ".", "_", ":", "-"' })
  .refine((id) => id !== 'search', { message: '"search" is reserved' })
  .describe('fact id');

export const factTextInput = z
  .string()
  .refine((text) => text.trim().length > 0, { message: 'must not be empty' })
  .refine((text) => utf8Length(text) <= MAX_FACT_BYTES, {
    message: `at most ${MAX_FACT_BYTES} bytes of UTF-8`,
  })
  .describe(`the fact, at most ${MAX_FACT_BYTES} bytes`);

export function memoryPort(context: ToolContext): MemoryPort {
  const port = context.ports.memory;
  if (!port) throw new ToolError('MEMORY_UNAVAILABLE', 'memory is not available here');
  return port;
}

/** Capability errors (KeelError codes) become tool errors with the same code and message. */
export async function asToolCall<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!isKeelError(error)) throw error;
    const code = error.code === 'VALIDATION_FAILED' ? 'INVALID_ARGUMENT' : error.code;
    throw new ToolError(code, error.message);
  }
}

/**
 * The maintenance rule (docs/memory.md), enforced here and not by prompt: the
 * memory-maintainer may change a namespace only after this run paged through
 * memory_list for it completely (from no cursor, following next_cursor to null).
 */
export function assertMayChange(context: ToolContext, port: MemoryPort, namespace: string): void {
  if (context.agent !== MAINTAINER_AGENT) return;
  if (port.scans.isComplete(context.run_id, namespace)) return;
  throw new ToolError(
    'MEMORY_SCAN_REQUIRED',
    `${MAINTAINER_AGENT} must page through memory_list for namespace "${namespace}" completely (start without a cursor, pass each next_cursor until it is null) before it may change memory`,
  );
}
