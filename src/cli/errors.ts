// How the CLI ends: usage mistakes exit 2 with a hint, keel errors exit 1 with their
// code and message, anything else exits 1 with its message (never a stack by default).

import { isKeelError } from '../errors.ts';
import { KeelApiError } from '../client/index.ts';

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** node:util parseArgs throws TypeErrors with these codes for bad flags. */
function isParseArgsError(error: unknown): error is Error {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}

export function exitCodeFor(error: unknown, write: (line: string) => void): number {
  if (error instanceof UsageError || isParseArgsError(error)) {
    write(`keel: ${(error as Error).message}\nRun "keel --help" for usage.`);
    return 2;
  }
  // The API's own code and message (client commands talking to a server).
  if (error instanceof KeelApiError) {
    write(`keel: ${error.code}: ${error.message}`);
    return 1;
  }
  if (isKeelError(error)) {
    write(`keel: ${error.code}: ${error.message}`);
    return 1;
  }
  write(`keel: ${error instanceof Error ? error.message : String(error)}`);
  return 1;
}
