// Which driver errors mean "the store cannot take this right now" (a lost or refused
// connection, a full disk), and their one public form: 503 STORE_UNAVAILABLE with a
// Retry-After hint. Both backends map through here, so a caller sees the same answer
// whichever database failed; anything else stays the error it is (a 500 at the edge).

import { KeelError, isKeelError } from '../errors.ts';

/** Seconds a caller should wait before retrying a request the store could not take. */
export const STORE_RETRY_AFTER_S = 1;

type StoreFault = 'connection' | 'disk_full';

/** PostgreSQL SQLSTATEs that mean the server or the connection went away. */
const PG_CONNECTION_STATES = new Set([
  '57P01', // admin_shutdown (pg_terminate_backend, fast shutdown)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, recovering)
  '53300', // too_many_connections
]);

const SOCKET_MESSAGE =
  /Connection terminated|ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|timeout exceeded when trying to connect|not queryable|Client was closed/;

/** What kind of store fault `error` is, or null when it is something else. */
export function storeFault(error: unknown): StoreFault | null {
  if (isKeelError(error, 'STORE_UNAVAILABLE')) {
    const fault = error.details?.fault;
    return fault === 'disk_full' ? 'disk_full' : 'connection';
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    // SQLite: the database or the disk holding it is full (or max_page_count reached).
    if (code === 'SQLITE_FULL') return 'disk_full';
    // PostgreSQL: disk_full, and class 53 out-of-space relatives.
    if (code === '53100') return 'disk_full';
    if (code.startsWith('08') || PG_CONNECTION_STATES.has(code)) return 'connection';
    if (/^E(CONNRESET|CONNREFUSED|PIPE|TIMEDOUT|HOSTUNREACH)$/.test(code)) return 'connection';
  }
  if (error instanceof Error && SOCKET_MESSAGE.test(error.message)) return 'connection';
  return null;
}

/** The error a store caller sees: STORE_UNAVAILABLE for a store fault, else unchanged. */
export function toStoreError(error: unknown): unknown {
  if (isKeelError(error)) return error;
  const fault = storeFault(error);
  if (!fault) return error;
  const message =
    fault === 'disk_full'
      ? 'the store is out of disk space; deleting data still works'
      : 'the store is unreachable';
  const mapped = new KeelError('STORE_UNAVAILABLE', message, {
    fault,
    retry_after_s: STORE_RETRY_AFTER_S,
  });
  // The driver's error stays attached for the log; it is never sent to a caller.
  Object.defineProperty(mapped, 'cause', { value: error, enumerable: false });
  return mapped;
}
