// Connection loss must never end the process. pg emits 'error' on a client whose socket
// dies (pg_terminate_backend, a failover, a restart); an 'error' event nobody listens
// to is thrown by Node and kills the process. pg-pool listens only while a client sits
// idle, so a client checked out for a transaction, or between the statements of one,
// would take the process down. Every client the pool creates gets a listener for its
// whole life: the failure reaches the caller through the query it breaks (mapped to
// STORE_UNAVAILABLE), and the broken client is destroyed on release, not reused.

import type pg from 'pg';

/** How long a request waits for a connection before answering STORE_UNAVAILABLE. */
export const CONNECT_TIMEOUT_MS = 5_000;

export function guardPoolConnections(
  pool: pg.Pool,
  onLost: (error: Error) => void = () => undefined,
): void {
  pool.on('error', (error) => onLost(error));
  pool.on('connect', (client) => {
    client.on('error', (error) => onLost(error));
  });
}
